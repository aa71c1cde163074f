// Op attributes: a sorted name -> value map. Values cover what StableHLO ops carry: integers
// with their type (`1 : i64`), booleans, strings, `array<i64: ...>`, `array<i1: ...>`,
// `dense<...> : tensor<...>` (held as a host Tensor), `#stablehlo<kind VALUE>` enums, symbol
// refs (`@f`), and the structured dimension-number attributes of dot/conv/gather/scatter.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/tensor.h"

namespace netspec::hlo {

using I64s = std::vector<int64_t>;

struct IntAttr {  // `5 : i32`
  int64_t value = 0;
  DType type = DType::kI64;
  bool operator==(const IntAttr&) const = default;
};
struct UnitAttr {  // present-without-value, e.g. use_global_device_ids
  bool operator==(const UnitAttr&) const = default;
};
struct EnumAttr {  // #stablehlo<comparison_direction LT>: kind = "comparison_direction", value = "LT"
  std::string kind;
  std::string value;
  bool operator==(const EnumAttr&) const = default;
};
struct SymbolRef {  // @callee
  std::string name;
  bool operator==(const SymbolRef&) const = default;
};
struct DotDims {  // #stablehlo.dot<...>
  I64s lhs_batching, rhs_batching, lhs_contracting, rhs_contracting;
  bool operator==(const DotDims&) const = default;
};
struct ConvDims {  // #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>
  int64_t input_batch = 0, input_feature = 1;
  I64s input_spatial;
  int64_t kernel_input_feature = 1, kernel_output_feature = 0;
  I64s kernel_spatial;
  int64_t output_batch = 0, output_feature = 1;
  I64s output_spatial;
  bool operator==(const ConvDims&) const = default;
};
struct GatherDims {  // #stablehlo.gather<...>
  I64s offset_dims, collapsed_slice_dims, operand_batching_dims, start_indices_batching_dims,
      start_index_map;
  int64_t index_vector_dim = 0;
  bool operator==(const GatherDims&) const = default;
};
struct ScatterDims {  // #stablehlo.scatter<...>
  I64s update_window_dims, inserted_window_dims, input_batching_dims, scatter_indices_batching_dims,
      scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDims&) const = default;
};
struct ChannelHandle {  // #stablehlo.channel_handle<handle = 1, type = 1>
  int64_t handle = 0, type = 0;
  bool operator==(const ChannelHandle&) const = default;
};

// #stablehlo.dot_algorithm<...>: how dot_general may compute (input precisions, accumulation,
// decomposition). A hint for accelerators: netspec's executors compute in the operand type.
struct DotAlgorithm {
  std::string lhs_precision_type, rhs_precision_type, accumulation_type;  // f32, tf32, bf16, ...
  int64_t lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1;
  bool allow_imprecise_accumulation = false;
  bool operator==(const DotAlgorithm&) const = default;
};

// Dense elements compare by type and bytes.
struct DenseAttr {
  Tensor value;
  bool operator==(const DenseAttr& o) const;
};

using AttrValue = std::variant<bool, IntAttr, UnitAttr, std::string, I64s, std::vector<bool>,
                               DenseAttr, EnumAttr, std::vector<EnumAttr>, SymbolRef, DotDims,
                               ConvDims, GatherDims, ScatterDims, ChannelHandle, DotAlgorithm>;

class Attrs {
 public:
  bool has(const std::string& name) const { return map_.count(name) != 0; }
  void set(const std::string& name, AttrValue v) { map_[name] = std::move(v); }
  void erase(const std::string& name) { map_.erase(name); }
  const AttrValue* find(const std::string& name) const;
  // Typed getters throw an Error naming the attribute when it is absent or of another kind.
  template <typename T>
  const T& get(const std::string& name) const;
  template <typename T>
  const T* get_if(const std::string& name) const {
    auto* v = find(name);
    return v ? std::get_if<T>(v) : nullptr;
  }
  int64_t get_int(const std::string& name) const { return get<IntAttr>(name).value; }
  int64_t get_int_or(const std::string& name, int64_t dflt) const {
    auto* p = get_if<IntAttr>(name);
    return p ? p->value : dflt;
  }
  const I64s& get_i64s(const std::string& name) const { return get<I64s>(name); }
  const std::string& get_enum(const std::string& name) const { return get<EnumAttr>(name).value; }
  bool get_bool_or(const std::string& name, bool dflt) const {
    auto* p = get_if<bool>(name);
    return p ? *p : dflt;
  }
  const std::map<std::string, AttrValue>& map() const { return map_; }
  bool empty() const { return map_.empty(); }
  bool operator==(const Attrs& o) const { return map_ == o.map_; }

 private:
  std::map<std::string, AttrValue> map_;
};

}  // namespace netspec::hlo

#include "hlo/attr_get.h"
