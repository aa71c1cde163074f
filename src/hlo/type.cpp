#include "hlo/type.h"

#include <fmt/format.h>

namespace netspec::hlo {

std::string Type::str() const {
  switch (kind_) {
    case Kind::kToken: return "!stablehlo.token";
    case Kind::kTuple: return fmt::format("tuple<{}>", types_str(elems_));
    case Kind::kTensor: break;
  }
  if (shape_.empty()) return fmt::format("tensor<{}>", dtype_name(dtype_));
  return fmt::format("tensor<{}x{}>", shape_str(shape_), dtype_name(dtype_));
}

std::string types_str(const std::vector<Type>& ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + ts[i].str();
  return s;
}

}  // namespace netspec::hlo
