// hlo::Builder: one function per StableHLO op, named after its mnemonic, that creates the op at
// the end of the current block and infers and checks its result types when it is built
// (`[dot_general] contracting dims differ (got 784 vs 512)`). Regions are built by callbacks that
// receive the region's block arguments and return the values for its stablehlo.return.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir.h"

namespace netspec::hlo {

class Builder;
// Builds a region body: gets a builder positioned in the new block and its arguments; returns
// the values the region yields (a stablehlo.return is appended).
using RegionFn = std::function<std::vector<Value*>(Builder& b, const std::vector<Value*>& args)>;

struct ConvOptions {
  ConvDims dims;              // default: NCHW input, OIHW kernel, NCHW output (set spatial dims!)
  I64s window_strides;        // empty = all 1
  std::vector<std::pair<int64_t, int64_t>> padding;  // (low, high) per spatial dim; empty = 0
  I64s lhs_dilation;          // empty = all 1
  I64s rhs_dilation;          // empty = all 1
  std::vector<bool> window_reversal;  // empty = none
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  // NCHW/OIHW/NCHW dimension numbers for n spatial dims.
  static ConvDims nchw(int n_spatial);
};

struct WindowOptions {  // reduce_window / select_and_scatter
  I64s window_dimensions;
  I64s window_strides;    // empty = all 1
  I64s base_dilations;    // empty = all 1 (reduce_window only)
  I64s window_dilations;  // empty = all 1 (reduce_window only)
  std::vector<std::pair<int64_t, int64_t>> padding;  // per dim; empty = 0
};

class Builder {
 public:
  explicit Builder(Block* block) : block_(block) {}
  Block* block() const { return block_; }
  void set_block(Block* b) { block_ = b; }
  void set_location(Location loc) { loc_ = loc; }

  // Generic creation used by every function below and by the parser.
  Op* create(OpKind kind, std::vector<Value*> operands, Attrs attrs = {},
             std::vector<Type> result_types = {}, std::vector<std::unique_ptr<Block>> regions = {});
  // A single-block region with arguments of the given types, filled by fn.
  std::unique_ptr<Block> region(const std::vector<Type>& arg_types, const RegionFn& fn);

  // --- constants ---
  Value* constant(Tensor value);
  Value* constant_splat(double v, const Type& type);  // every element = v (converted)
  Value* scalar(double v, DType dtype) { return constant_splat(v, Type::tensor(dtype, {})); }
  Value* iota(const Type& type, int64_t iota_dimension);

  // --- elementwise unary ---
  Value* negate(Value* x);
  Value* abs(Value* x);
  Value* sign(Value* x);
  Value* exponential(Value* x);
  Value* exponential_minus_one(Value* x);
  Value* log(Value* x);
  Value* log_plus_one(Value* x);
  Value* logistic(Value* x);
  Value* tanh(Value* x);
  Value* erf(Value* x);  // chlo.erf
  Value* sqrt(Value* x);
  Value* rsqrt(Value* x);
  Value* cbrt(Value* x);
  Value* sine(Value* x);
  Value* cosine(Value* x);
  Value* tan(Value* x);
  Value* floor(Value* x);
  Value* ceil(Value* x);
  Value* round_nearest_afz(Value* x);
  Value* round_nearest_even(Value* x);
  Value* is_finite(Value* x);
  Value* not_(Value* x);
  Value* popcnt(Value* x);
  Value* count_leading_zeros(Value* x);
  Value* convert(Value* x, DType to);
  Value* bitcast_convert(Value* x, const Type& to);
  Value* reduce_precision(Value* x, int64_t exponent_bits, int64_t mantissa_bits);
  Value* unary(OpKind kind, Value* x);  // any op of the unary family without attributes

  // --- elementwise binary / ternary ---
  Value* add(Value* a, Value* b);
  Value* subtract(Value* a, Value* b);
  Value* multiply(Value* a, Value* b);
  Value* divide(Value* a, Value* b);
  Value* remainder(Value* a, Value* b);
  Value* power(Value* a, Value* b);
  Value* maximum(Value* a, Value* b);
  Value* minimum(Value* a, Value* b);
  Value* atan2(Value* a, Value* b);
  Value* and_(Value* a, Value* b);
  Value* or_(Value* a, Value* b);
  Value* xor_(Value* a, Value* b);
  Value* shift_left(Value* a, Value* b);
  Value* shift_right_arithmetic(Value* a, Value* b);
  Value* shift_right_logical(Value* a, Value* b);
  Value* binary(OpKind kind, Value* a, Value* b);  // any binary-family op without attributes
  // direction: EQ NE GE GT LE LT; compare_type: FLOAT TOTALORDER SIGNED UNSIGNED
  // (empty = the natural one for the element type).
  Value* compare(Value* a, Value* b, std::string_view direction, std::string_view compare_type = {});
  Value* clamp(Value* min, Value* x, Value* max);
  Value* select(Value* pred, Value* on_true, Value* on_false);

  // --- shape ---
  Value* reshape(Value* x, Shape shape);
  Value* broadcast_in_dim(Value* x, Shape shape, I64s broadcast_dimensions);
  Value* transpose(Value* x, I64s permutation);
  Value* slice(Value* x, I64s start, I64s limit, I64s strides = {});
  Value* dynamic_slice(Value* x, const std::vector<Value*>& start_indices, I64s slice_sizes);
  Value* dynamic_update_slice(Value* x, Value* update, const std::vector<Value*>& start_indices);
  Value* concatenate(const std::vector<Value*>& xs, int64_t dimension);
  Value* pad(Value* x, Value* padding_value, I64s low, I64s high, I64s interior = {});
  Value* reverse(Value* x, I64s dimensions);

  // --- contractions ---
  // result_dtype: element type of the result (default: the operands').
  Value* dot_general(Value* lhs, Value* rhs, const DotDims& dims,
                     const std::vector<std::string>& precision = {}, std::optional<DType> result_dtype = {});
  Value* convolution(Value* lhs, Value* rhs, const ConvOptions& opts, std::optional<DType> result_dtype = {});

  // --- reductions and windows ---
  std::vector<Value*> reduce(const std::vector<Value*>& inputs, const std::vector<Value*>& inits,
                             I64s dimensions, const RegionFn& body);
  // Single-input reduce whose body applies one binary op (add, maximum, ...).
  Value* reduce(Value* x, Value* init, I64s dimensions, OpKind combiner);
  std::vector<Value*> reduce_window(const std::vector<Value*>& inputs, const std::vector<Value*>& inits,
                                    const WindowOptions& w, const RegionFn& body);
  Value* reduce_window(Value* x, Value* init, const WindowOptions& w, OpKind combiner);
  Value* select_and_scatter(Value* operand, Value* source, Value* init, const WindowOptions& w,
                            const RegionFn& select, const RegionFn& scatter);
  std::vector<Value*> map(const std::vector<Value*>& inputs, I64s dimensions, const RegionFn& body);

  // --- indexing ---
  Value* gather(Value* operand, Value* start_indices, const GatherDims& dims, I64s slice_sizes,
                bool indices_are_sorted = false);
  std::vector<Value*> scatter(const std::vector<Value*>& inputs, Value* scatter_indices,
                              const std::vector<Value*>& updates, const ScatterDims& dims,
                              const RegionFn& update_computation, bool indices_are_sorted = false,
                              bool unique_indices = false);
  std::vector<Value*> sort(const std::vector<Value*>& inputs, int64_t dimension, bool is_stable,
                           const RegionFn& comparator);

  // --- control flow, tuples, calls ---
  std::vector<Value*> while_(const std::vector<Value*>& init, const RegionFn& cond, const RegionFn& body);
  std::vector<Value*> if_(Value* pred, const RegionFn& on_true, const RegionFn& on_false);
  std::vector<Value*> case_(Value* index, const std::vector<RegionFn>& branches);
  Value* tuple(const std::vector<Value*>& xs);
  Value* get_tuple_element(Value* t, int64_t index);
  std::vector<Value*> optimization_barrier(const std::vector<Value*>& xs);
  std::vector<Value*> call(const Func& callee, const std::vector<Value*>& args);
  void return_(const std::vector<Value*>& xs);       // stablehlo.return (region terminator)
  void func_return(const std::vector<Value*>& xs);   // func.return; sets the func's result types

  // --- random numbers and collectives ---
  // algorithm: DEFAULT | THREE_FRY | PHILOX. Returns (new_state, output).
  std::pair<Value*, Value*> rng_bit_generator(Value* state, const Type& output_type,
                                              std::string_view algorithm = "DEFAULT");
  // replica_groups: each row lists replica ids combined together (empty = all replicas, one group).
  std::vector<Value*> all_reduce(const std::vector<Value*>& xs, const std::vector<I64s>& replica_groups,
                                 OpKind combiner);

 private:
  Block* block_;
  Location loc_;
};

}  // namespace netspec::hlo
