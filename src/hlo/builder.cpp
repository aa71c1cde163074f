// hlo::Builder: one function per StableHLO mnemonic; type rules live in verify_*.cpp.
//
// Attribute names and kinds (the printer prints them verbatim, the parser must produce them):
//   constant            value: DenseAttr
//   iota                iota_dimension: IntAttr i64
//   reduce_precision    exponent_bits, mantissa_bits: IntAttr i32
//   compare             comparison_direction: EnumAttr "comparison_direction" (EQ NE GE GT LE LT)
//                       compare_type: EnumAttr "comparison_type" (FLOAT TOTALORDER SIGNED
//                       UNSIGNED); the builder always sets it (FLOAT / SIGNED / UNSIGNED by element
//                       type); the rules accept it absent.
//   broadcast_in_dim    broadcast_dimensions: I64s
//   transpose           permutation: I64s
//   slice               start_indices, limit_indices, strides: I64s (builder always sets strides)
//   dynamic_slice       slice_sizes: I64s
//   concatenate         dimension: IntAttr i64
//   pad                 edge_padding_low, edge_padding_high, interior_padding: I64s (all set)
//   reverse             dimensions: I64s
//   dot_general         dot_dimension_numbers: DotDims; precision_config: vector<EnumAttr>
//                       kind "precision" (omitted when empty)
//   convolution         dimension_numbers: ConvDims; window_strides, lhs_dilation, rhs_dilation:
//                       I64s; padding: DenseAttr i64 [N,2]; window_reversal: vector<bool>
//                       (each omitted when the ConvOptions field is empty);
//                       feature_group_count, batch_group_count: IntAttr i64 (always set);
//                       precision_config as dot_general
//   reduce              dimensions: I64s                               region: body
//   reduce_window       window_dimensions, window_strides, base_dilations, window_dilations: I64s;
//                       padding: DenseAttr i64 [N,2] (optional ones omitted when empty)   body
//   select_and_scatter  window_dimensions, window_strides: I64s; padding: DenseAttr [N,2]
//                       regions: select, scatter
//   map                 dimensions: I64s                               region: computation
//   gather              dimension_numbers: GatherDims; slice_sizes: I64s; indices_are_sorted: bool
//   scatter             scatter_dimension_numbers: ScatterDims; indices_are_sorted,
//                       unique_indices: bool                           region: update_computation
//   sort                dimension: IntAttr i64; is_stable: bool        region: comparator
//   while               regions: cond, body        if: true_branch, false_branch   case: branches
//   get_tuple_element   index: IntAttr i32
//   func.call           callee: SymbolRef
//   rng_bit_generator   rng_algorithm: EnumAttr "rng_algorithm" (DEFAULT THREE_FRY PHILOX)
//   all_reduce          replica_groups: DenseAttr i64 [groups, size] ([0,0] when empty = all);
//                       optional channel_handle: ChannelHandle; use_global_device_ids: UnitAttr
//                       region: computation
// Optional window attributes absent from an op mean the spec defaults (strides/dilations 1,
// padding 0, no reversal, group counts 1); the type rules apply those defaults.
#include "hlo/builder.h"

#include "core/bf16.h"

#include "hlo/verify.h"

namespace netspec::hlo {
namespace {

Tensor padding_tensor(const std::vector<std::pair<int64_t, int64_t>>& p) {
  std::vector<int64_t> v;
  for (auto [lo, hi] : p) {
    v.push_back(lo);
    v.push_back(hi);
  }
  return Tensor::from<int64_t>(DType::kI64, {static_cast<int64_t>(p.size()), 2}, v);
}

// A one-op region body: combiner(args[i], args[n + i]) for each of the n accumulators.
RegionFn combiner_body(OpKind combiner) {
  return [combiner](Builder& b, const std::vector<Value*>& args) {
    size_t n = args.size() / 2;
    std::vector<Value*> out;
    for (size_t i = 0; i < n; ++i) out.push_back(b.binary(combiner, args[i], args[n + i]));
    return out;
  };
}

std::vector<Type> scalar_types(const std::vector<Value*>& vs) {
  std::vector<Type> ts;
  for (auto* v : vs) {
    if (!v) throw Error("[builder] null value");
    ts.push_back(Type::tensor(v->type.dtype(), {}));
  }
  return ts;
}

std::vector<Value*> results_of(Op* op) {
  std::vector<Value*> r;
  for (auto& v : op->results) r.push_back(v.get());
  return r;
}

}  // namespace

// The elementwise ops whose builder function (builder.h) takes only its operands,
// X(function, OpKind); each is defined from this list below.
// clang-format off
#define NETSPEC_BUILDER_UNARY_OPS(X) \
  X(negate, kNegate) X(abs, kAbs) X(sign, kSign) X(exponential, kExponential) \
  X(exponential_minus_one, kExponentialMinusOne) X(log, kLog) X(log_plus_one, kLogPlusOne) \
  X(logistic, kLogistic) X(tanh, kTanh) X(erf, kErf) X(sqrt, kSqrt) X(rsqrt, kRsqrt) \
  X(cbrt, kCbrt) X(sine, kSine) X(cosine, kCosine) X(tan, kTan) X(floor, kFloor) X(ceil, kCeil) \
  X(round_nearest_afz, kRoundNearestAfz) X(round_nearest_even, kRoundNearestEven) \
  X(is_finite, kIsFinite) X(not_, kNot) X(popcnt, kPopcnt) \
  X(count_leading_zeros, kCountLeadingZeros)
#define NETSPEC_BUILDER_BINARY_OPS(X) \
  X(add, kAdd) X(subtract, kSubtract) X(multiply, kMultiply) X(divide, kDivide) \
  X(remainder, kRemainder) X(power, kPower) X(maximum, kMaximum) X(minimum, kMinimum) \
  X(atan2, kAtan2) X(and_, kAnd) X(or_, kOr) X(xor_, kXor) X(shift_left, kShiftLeft) \
  X(shift_right_arithmetic, kShiftRightArithmetic) X(shift_right_logical, kShiftRightLogical)
// clang-format on

ConvDims ConvOptions::nchw(int n_spatial) {
  ConvDims d;
  d.input_batch = 0;
  d.input_feature = 1;
  d.kernel_output_feature = 0;
  d.kernel_input_feature = 1;
  d.output_batch = 0;
  d.output_feature = 1;
  for (int i = 0; i < n_spatial; ++i) {
    d.input_spatial.push_back(2 + i);
    d.kernel_spatial.push_back(2 + i);
    d.output_spatial.push_back(2 + i);
  }
  return d;
}

Op* Builder::create(OpKind kind, std::vector<Value*> operands, Attrs attrs,
                    std::vector<Type> result_types, std::vector<std::unique_ptr<Block>> regions) {
  if (!block_) fail(op_mnemonic(kind), "builder has no insertion block");
  if (Op* t = block_->terminator())
    fail(op_mnemonic(kind), "block already ends with {}; nothing may follow it", t->name());
  auto op = std::make_unique<Op>(kind);
  op->operands = std::move(operands);
  op->attrs = std::move(attrs);
  op->regions = std::move(regions);
  op->parent = block_;
  op->loc = loc_;
  for (auto& r : op->regions) {
    if (!r) fail(op_mnemonic(kind), "null region");
    r->parent_op = op.get();
  }
  std::vector<Type> types = infer_result_types(*op, result_types);
  for (size_t i = 0; i < types.size(); ++i) {
    auto v = std::make_unique<Value>();
    v->type = std::move(types[i]);
    v->def = op.get();
    v->index = static_cast<int>(i);
    op->results.push_back(std::move(v));
  }
  block_->ops.push_back(std::move(op));
  return block_->ops.back().get();
}

std::unique_ptr<Block> Builder::region(const std::vector<Type>& arg_types, const RegionFn& fn) {
  auto blk = std::make_unique<Block>();
  std::vector<Value*> args;
  for (const auto& t : arg_types) args.push_back(blk->add_arg(t));
  Builder sub(blk.get());
  sub.set_location(loc_);
  std::vector<Value*> out = fn(sub, args);
  sub.return_(out);
  return blk;
}

// --- constants ---

Value* Builder::constant(Tensor value) {
  Attrs a;
  Type t = Type::tensor(value.dtype(), value.shape());
  a.set("value", DenseAttr{std::move(value)});
  return create(OpKind::kConstant, {}, std::move(a), {t})->result();
}

// A scalar constant broadcast to the shape (as JAX emits splats): the module stores one element,
// not numel copies (relu's zero at 32x64x112x112 would otherwise be a 100 MB literal).
Value* Builder::constant_splat(double v, const Type& type) {
  if (!type.is_tensor()) fail("constant", "splat needs a tensor type (got {})", type.str());
  Tensor t(type.dtype(), {});
  if (type.dtype() == DType::kBF16)  // rounded through f32 (core/bf16.h)
    t.data<uint16_t>()[0] = f32_to_bf16(static_cast<float>(v));
  else
    t = Tensor::from<double>(type.dtype(), {}, {v});
  Value* s = constant(std::move(t));
  if (type.rank() == 0) return s;
  return broadcast_in_dim(s, type.shape(), {});
}

Value* Builder::iota(const Type& type, int64_t iota_dimension) {
  Attrs a;
  a.set("iota_dimension", IntAttr{iota_dimension, DType::kI64});
  return create(OpKind::kIota, {}, std::move(a), {type})->result();
}

// --- elementwise unary ---

Value* Builder::unary(OpKind kind, Value* x) { return create(kind, {x})->result(); }
#define NETSPEC_DEFINE_UNARY(fn, kind) \
  Value* Builder::fn(Value* x) { return unary(OpKind::kind, x); }
NETSPEC_BUILDER_UNARY_OPS(NETSPEC_DEFINE_UNARY)
#undef NETSPEC_DEFINE_UNARY

Value* Builder::convert(Value* x, DType to) {
  if (!x) fail("convert", "null operand");
  return create(OpKind::kConvert, {x}, {}, {x->type.with_dtype(to)})->result();
}

Value* Builder::bitcast_convert(Value* x, const Type& to) {
  return create(OpKind::kBitcastConvert, {x}, {}, {to})->result();
}

Value* Builder::reduce_precision(Value* x, int64_t exponent_bits, int64_t mantissa_bits) {
  Attrs a;
  a.set("exponent_bits", IntAttr{exponent_bits, DType::kI32});
  a.set("mantissa_bits", IntAttr{mantissa_bits, DType::kI32});
  return create(OpKind::kReducePrecision, {x}, std::move(a))->result();
}

// --- elementwise binary / ternary ---

Value* Builder::binary(OpKind kind, Value* a, Value* b) { return create(kind, {a, b})->result(); }
#define NETSPEC_DEFINE_BINARY(fn, kind) \
  Value* Builder::fn(Value* a, Value* b) { return binary(OpKind::kind, a, b); }
NETSPEC_BUILDER_BINARY_OPS(NETSPEC_DEFINE_BINARY)
#undef NETSPEC_DEFINE_BINARY

Value* Builder::compare(Value* a, Value* b, std::string_view direction,
                        std::string_view compare_type) {
  if (!a) fail("compare", "null operand");
  std::string ct(compare_type);
  if (ct.empty()) {
    DType t = a->type.dtype();
    ct = is_float(t) ? "FLOAT" : is_signed_integer(t) ? "SIGNED" : "UNSIGNED";
  }
  Attrs at;
  at.set("comparison_direction", EnumAttr{"comparison_direction", std::string(direction)});
  at.set("compare_type", EnumAttr{"comparison_type", ct});
  return create(OpKind::kCompare, {a, b}, std::move(at))->result();
}

Value* Builder::clamp(Value* min, Value* x, Value* max) {
  return create(OpKind::kClamp, {min, x, max})->result();
}

Value* Builder::select(Value* pred, Value* on_true, Value* on_false) {
  return create(OpKind::kSelect, {pred, on_true, on_false})->result();
}

// --- shape ---

Value* Builder::reshape(Value* x, Shape shape) {
  if (!x) fail("reshape", "null operand");
  return create(OpKind::kReshape, {x}, {}, {x->type.with_shape(std::move(shape))})->result();
}

Value* Builder::broadcast_in_dim(Value* x, Shape shape, I64s broadcast_dimensions) {
  if (!x) fail("broadcast_in_dim", "null operand");
  Attrs a;
  a.set("broadcast_dimensions", std::move(broadcast_dimensions));
  return create(OpKind::kBroadcastInDim, {x}, std::move(a), {x->type.with_shape(std::move(shape))})
      ->result();
}

Value* Builder::transpose(Value* x, I64s permutation) {
  Attrs a;
  a.set("permutation", std::move(permutation));
  return create(OpKind::kTranspose, {x}, std::move(a))->result();
}

Value* Builder::slice(Value* x, I64s start, I64s limit, I64s strides) {
  if (strides.empty()) strides.assign(start.size(), 1);
  Attrs a;
  a.set("start_indices", std::move(start));
  a.set("limit_indices", std::move(limit));
  a.set("strides", std::move(strides));
  return create(OpKind::kSlice, {x}, std::move(a))->result();
}

Value* Builder::dynamic_slice(Value* x, const std::vector<Value*>& start_indices,
                              I64s slice_sizes) {
  std::vector<Value*> ops{x};
  ops.insert(ops.end(), start_indices.begin(), start_indices.end());
  Attrs a;
  a.set("slice_sizes", std::move(slice_sizes));
  return create(OpKind::kDynamicSlice, std::move(ops), std::move(a))->result();
}

Value* Builder::dynamic_update_slice(Value* x, Value* update,
                                     const std::vector<Value*>& start_indices) {
  std::vector<Value*> ops{x, update};
  ops.insert(ops.end(), start_indices.begin(), start_indices.end());
  return create(OpKind::kDynamicUpdateSlice, std::move(ops))->result();
}

Value* Builder::concatenate(const std::vector<Value*>& xs, int64_t dimension) {
  Attrs a;
  a.set("dimension", IntAttr{dimension, DType::kI64});
  return create(OpKind::kConcatenate, xs, std::move(a))->result();
}

Value* Builder::pad(Value* x, Value* padding_value, I64s low, I64s high, I64s interior) {
  if (interior.empty()) interior.assign(low.size(), 0);
  Attrs a;
  a.set("edge_padding_low", std::move(low));
  a.set("edge_padding_high", std::move(high));
  a.set("interior_padding", std::move(interior));
  return create(OpKind::kPad, {x, padding_value}, std::move(a))->result();
}

Value* Builder::reverse(Value* x, I64s dimensions) {
  Attrs a;
  a.set("dimensions", std::move(dimensions));
  return create(OpKind::kReverse, {x}, std::move(a))->result();
}

// --- contractions ---

namespace {
void set_precision(Attrs& a, const std::vector<std::string>& precision) {
  if (precision.empty()) return;
  std::vector<EnumAttr> p;
  for (const auto& s : precision) p.push_back(EnumAttr{"precision", s});
  a.set("precision_config", std::move(p));
}

// Infers the shape with the operands' element type, then states `dtype` when it differs.
std::vector<Type> with_result_dtype(OpKind kind, const std::vector<Value*>& operands,
                                    const Attrs& attrs, std::optional<DType> dtype) {
  if (!dtype) return {};
  Op probe(kind);
  probe.operands = operands;
  probe.attrs = attrs;
  auto ts = infer_result_types(probe, {});
  if (ts[0].dtype() == *dtype) return {};
  return {ts[0].with_dtype(*dtype)};
}
}  // namespace

Value* Builder::dot_general(Value* lhs, Value* rhs, const DotDims& dims,
                            const std::vector<std::string>& precision,
                            std::optional<DType> result_dtype) {
  Attrs a;
  a.set("dot_dimension_numbers", dims);
  set_precision(a, precision);
  auto given = with_result_dtype(OpKind::kDotGeneral, {lhs, rhs}, a, result_dtype);
  return create(OpKind::kDotGeneral, {lhs, rhs}, std::move(a), std::move(given))->result();
}

Value* Builder::convolution(Value* lhs, Value* rhs, const ConvOptions& o,
                            std::optional<DType> result_dtype) {
  Attrs a;
  a.set("dimension_numbers", o.dims);
  if (!o.window_strides.empty()) a.set("window_strides", o.window_strides);
  if (!o.padding.empty()) a.set("padding", DenseAttr{padding_tensor(o.padding)});
  if (!o.lhs_dilation.empty()) a.set("lhs_dilation", o.lhs_dilation);
  if (!o.rhs_dilation.empty()) a.set("rhs_dilation", o.rhs_dilation);
  if (!o.window_reversal.empty()) a.set("window_reversal", o.window_reversal);
  a.set("feature_group_count", IntAttr{o.feature_group_count, DType::kI64});
  a.set("batch_group_count", IntAttr{o.batch_group_count, DType::kI64});
  auto given = with_result_dtype(OpKind::kConvolution, {lhs, rhs}, a, result_dtype);
  return create(OpKind::kConvolution, {lhs, rhs}, std::move(a), std::move(given))->result();
}

// --- reductions and windows ---

namespace {
// reduce / reduce_window: operands inputs ++ inits, one region taking (accumulators, elements),
// both with the inits' scalar types.
std::vector<Value*> accumulating(Builder& b, OpKind kind, const std::vector<Value*>& inputs,
                                 const std::vector<Value*>& inits, Attrs a, const RegionFn& body) {
  std::vector<Value*> ops = inputs;
  ops.insert(ops.end(), inits.begin(), inits.end());
  auto ts = scalar_types(inits);
  std::vector<Type> args = ts;
  args.insert(args.end(), ts.begin(), ts.end());
  std::vector<std::unique_ptr<Block>> regs;
  regs.push_back(b.region(args, body));
  return results_of(b.create(kind, std::move(ops), std::move(a), {}, std::move(regs)));
}
}  // namespace

std::vector<Value*> Builder::reduce(const std::vector<Value*>& inputs,
                                    const std::vector<Value*>& inits, I64s dimensions,
                                    const RegionFn& body) {
  Attrs a;
  a.set("dimensions", std::move(dimensions));
  return accumulating(*this, OpKind::kReduce, inputs, inits, std::move(a), body);
}

Value* Builder::reduce(Value* x, Value* init, I64s dimensions, OpKind combiner) {
  return reduce(std::vector<Value*>{x}, std::vector<Value*>{init}, std::move(dimensions),
                combiner_body(combiner))[0];
}

namespace {
void set_window(Attrs& a, const WindowOptions& w, bool dilations) {
  a.set("window_dimensions", w.window_dimensions);
  if (!w.window_strides.empty()) a.set("window_strides", w.window_strides);
  if (dilations && !w.base_dilations.empty()) a.set("base_dilations", w.base_dilations);
  if (dilations && !w.window_dilations.empty()) a.set("window_dilations", w.window_dilations);
  if (!w.padding.empty()) a.set("padding", DenseAttr{padding_tensor(w.padding)});
}
}  // namespace

std::vector<Value*> Builder::reduce_window(const std::vector<Value*>& inputs,
                                           const std::vector<Value*>& inits, const WindowOptions& w,
                                           const RegionFn& body) {
  Attrs a;
  set_window(a, w, true);
  return accumulating(*this, OpKind::kReduceWindow, inputs, inits, std::move(a), body);
}

Value* Builder::reduce_window(Value* x, Value* init, const WindowOptions& w, OpKind combiner) {
  return reduce_window(std::vector<Value*>{x}, std::vector<Value*>{init}, w,
                       combiner_body(combiner))[0];
}

Value* Builder::select_and_scatter(Value* operand, Value* source, Value* init,
                                   const WindowOptions& w, const RegionFn& select,
                                   const RegionFn& scatter) {
  if (!operand || !source) fail("select_and_scatter", "null operand");
  if (!w.base_dilations.empty() || !w.window_dilations.empty())
    fail("select_and_scatter", "dilations are not supported (got base {} window {} entries)",
         w.base_dilations.size(), w.window_dilations.size());
  Attrs a;
  set_window(a, w, false);
  Type e = Type::tensor(operand->type.dtype(), {});
  Type se = Type::tensor(source->type.dtype(), {});
  std::vector<std::unique_ptr<Block>> regs;
  regs.push_back(region({e, e}, select));
  regs.push_back(region({se, se}, scatter));
  return create(OpKind::kSelectAndScatter, {operand, source, init}, std::move(a), {},
                std::move(regs))
      ->result();
}

std::vector<Value*> Builder::map(const std::vector<Value*>& inputs, I64s dimensions,
                                 const RegionFn& body) {
  Attrs a;
  a.set("dimensions", std::move(dimensions));
  std::vector<std::unique_ptr<Block>> regs;
  regs.push_back(region(scalar_types(inputs), body));
  return results_of(create(OpKind::kMap, inputs, std::move(a), {}, std::move(regs)));
}

// --- indexing ---

Value* Builder::gather(Value* operand, Value* start_indices, const GatherDims& dims,
                       I64s slice_sizes, bool indices_are_sorted) {
  Attrs a;
  a.set("dimension_numbers", dims);
  a.set("slice_sizes", std::move(slice_sizes));
  a.set("indices_are_sorted", indices_are_sorted);
  return create(OpKind::kGather, {operand, start_indices}, std::move(a))->result();
}

std::vector<Value*> Builder::scatter(const std::vector<Value*>& inputs, Value* scatter_indices,
                                     const std::vector<Value*>& updates, const ScatterDims& dims,
                                     const RegionFn& update_computation, bool indices_are_sorted,
                                     bool unique_indices) {
  std::vector<Value*> ops = inputs;
  ops.push_back(scatter_indices);
  ops.insert(ops.end(), updates.begin(), updates.end());
  auto ts = scalar_types(inputs);
  std::vector<Type> args = ts;
  args.insert(args.end(), ts.begin(), ts.end());
  Attrs a;
  a.set("scatter_dimension_numbers", dims);
  a.set("indices_are_sorted", indices_are_sorted);
  a.set("unique_indices", unique_indices);
  std::vector<std::unique_ptr<Block>> regs;
  regs.push_back(region(args, update_computation));
  return results_of(create(OpKind::kScatter, std::move(ops), std::move(a), {}, std::move(regs)));
}

std::vector<Value*> Builder::sort(const std::vector<Value*>& inputs, int64_t dimension,
                                  bool is_stable, const RegionFn& comparator) {
  std::vector<Type> args;
  for (const auto& t : scalar_types(inputs)) {
    args.push_back(t);
    args.push_back(t);
  }
  Attrs a;
  a.set("dimension", IntAttr{dimension, DType::kI64});
  a.set("is_stable", is_stable);
  std::vector<std::unique_ptr<Block>> regs;
  regs.push_back(region(args, comparator));
  return results_of(create(OpKind::kSort, inputs, std::move(a), {}, std::move(regs)));
}

// --- control flow, tuples, calls ---

std::vector<Value*> Builder::while_(const std::vector<Value*>& init, const RegionFn& cond,
                                    const RegionFn& body) {
  std::vector<Type> ts;
  for (auto* v : init) {
    if (!v) fail("while", "null operand");
    ts.push_back(v->type);
  }
  std::vector<std::unique_ptr<Block>> regs;
  regs.push_back(region(ts, cond));
  regs.push_back(region(ts, body));
  return results_of(create(OpKind::kWhile, init, {}, {}, std::move(regs)));
}

std::vector<Value*> Builder::if_(Value* pred, const RegionFn& on_true, const RegionFn& on_false) {
  std::vector<std::unique_ptr<Block>> regs;
  regs.push_back(region({}, on_true));
  regs.push_back(region({}, on_false));
  return results_of(create(OpKind::kIf, {pred}, {}, {}, std::move(regs)));
}

std::vector<Value*> Builder::case_(Value* index, const std::vector<RegionFn>& branches) {
  std::vector<std::unique_ptr<Block>> regs;
  for (const auto& fn : branches) regs.push_back(region({}, fn));
  return results_of(create(OpKind::kCase, {index}, {}, {}, std::move(regs)));
}

Value* Builder::tuple(const std::vector<Value*>& xs) {
  return create(OpKind::kTuple, xs)->result();
}

Value* Builder::get_tuple_element(Value* t, int64_t index) {
  Attrs a;
  a.set("index", IntAttr{index, DType::kI32});
  return create(OpKind::kGetTupleElement, {t}, std::move(a))->result();
}

std::vector<Value*> Builder::optimization_barrier(const std::vector<Value*>& xs) {
  return results_of(create(OpKind::kOptimizationBarrier, xs));
}

std::vector<Value*> Builder::call(const Func& callee, const std::vector<Value*>& args) {
  Attrs a;
  a.set("callee", SymbolRef{callee.name});
  // The callee's result types are stated so calls inside regions (not yet attached to the
  // module) still type; the rule checks them against the module when it can see it.
  return results_of(create(OpKind::kCall, args, std::move(a), callee.result_types));
}

void Builder::return_(const std::vector<Value*>& xs) { create(OpKind::kReturn, xs); }

void Builder::func_return(const std::vector<Value*>& xs) {
  Func* f = block_ ? block_->func() : nullptr;
  if (!f || block_ != f->body.get()) fail("func.return", "must be built in a function body block");
  create(OpKind::kFuncReturn, xs);
  f->result_types.clear();
  for (auto* v : xs) f->result_types.push_back(v->type);
}

// --- random numbers and collectives ---

std::pair<Value*, Value*> Builder::rng_bit_generator(Value* state, const Type& output_type,
                                                     std::string_view algorithm) {
  if (!state) fail("rng_bit_generator", "null operand");
  Attrs a;
  a.set("rng_algorithm", EnumAttr{"rng_algorithm", std::string(algorithm)});
  Op* op = create(OpKind::kRngBitGenerator, {state}, std::move(a), {state->type, output_type});
  return {op->result(0), op->result(1)};
}

std::vector<Value*> Builder::all_reduce(const std::vector<Value*>& xs,
                                        const std::vector<I64s>& replica_groups, OpKind combiner) {
  size_t width = 0;
  for (const auto& g : replica_groups) width = std::max(width, g.size());
  // Rows shorter than the widest are padded with -1 (the spec's padding id).
  std::vector<int64_t> flat;
  for (const auto& g : replica_groups) {
    flat.insert(flat.end(), g.begin(), g.end());
    flat.insert(flat.end(), width - g.size(), -1);
  }
  Attrs a;
  a.set("replica_groups",
        DenseAttr{Tensor::from<int64_t>(
            DType::kI64, {static_cast<int64_t>(replica_groups.size()), static_cast<int64_t>(width)},
            flat)});
  std::vector<Type> args;
  if (xs.empty() || !xs[0]) fail("all_reduce", "needs at least one operand");
  Type e = Type::tensor(xs[0]->type.dtype(), {});
  std::vector<std::unique_ptr<Block>> regs;
  regs.push_back(region({e, e}, combiner_body(combiner)));
  return results_of(create(OpKind::kAllReduce, xs, std::move(a), {}, std::move(regs)));
}

}  // namespace netspec::hlo
