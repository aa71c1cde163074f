// oracle_cases OUTDIR [NAME_REGEX]: writes every registered case module (printed with
// hlo::print_module) with its inputs and check options into OUTDIR, for compare.py to run on
// netspec's ref and cpu executors, XLA and IREE. This file: driver, helpers, elementwise cases.
#include "gen_cases.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <regex>
#include <set>

#include "core/npy.h"
#include "hlo/text/printer.h"
#include "hlo/verify.h"

namespace netspec::oracles {

std::vector<CaseDef>& case_registry() {
  static std::vector<CaseDef> r;
  return r;
}
bool add_case(const char* name, CaseFn fn) {
  case_registry().push_back({name, fn});
  return true;
}

CaseCtx::CaseCtx(const std::string& name) {
  f = m.add_func("main", {});
  b.set_block(f->body.get());
  // FNV-1a of the name seeds the generator, so a case's inputs do not depend on its neighbours.
  uint64_t h = 1469598103934665603ull;
  for (char ch : name) h = (h ^ static_cast<uint8_t>(ch)) * 1099511628211ull;
  rng_state = h;
}

Value* CaseCtx::arg(Tensor t) {
  Value* v = f->body->add_arg(Type::tensor(t.dtype(), t.shape()));
  inputs.push_back(std::move(t));
  return v;
}

uint64_t CaseCtx::next_u64() {  // splitmix64
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
double CaseCtx::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

Tensor CaseCtx::normal(DType t, Shape s, double scale) {
  std::vector<double> v(static_cast<size_t>(num_elements(s)));
  for (auto& x : v) {  // Box-Muller
    double u1 = 1.0 - uniform(), u2 = uniform();
    x = scale * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  return Tensor::from<double>(t, std::move(s), v);
}

Tensor CaseCtx::ints(DType t, Shape s, int64_t lo, int64_t hi) {
  std::vector<int64_t> v(static_cast<size_t>(num_elements(s)));
  for (auto& x : v) x = lo + static_cast<int64_t>(next_u64() % static_cast<uint64_t>(hi - lo + 1));
  return Tensor::from<int64_t>(t, std::move(s), v);
}

Tensor CaseCtx::bools(Shape s) { return ints(DType::kI1, std::move(s), 0, 1); }

Tensor CaseCtx::perm_ints(DType t, int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(v[static_cast<size_t>(i)], v[next_u64() % static_cast<uint64_t>(i + 1)]);
  return Tensor::from<int64_t>(t, {n}, v);
}

Type tt(DType d, Shape s) { return Type::tensor(d, std::move(s)); }
Tensor vec(DType d, const std::vector<double>& v) {
  return Tensor::from<double>(d, {static_cast<int64_t>(v.size())}, v);
}
Tensor mat(DType d, Shape s, const std::vector<double>& v) { return Tensor::from<double>(d, s, v); }
Tensor ivec(DType d, const std::vector<int64_t>& v) {
  return Tensor::from<int64_t>(d, {static_cast<int64_t>(v.size())}, v);
}

std::pair<Tensor, Tensor> pairs(DType d, const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> x, y;
  for (double p : a)
    for (double q : b) x.push_back(p), y.push_back(q);
  return {vec(d, x), vec(d, y)};
}
std::pair<Tensor, Tensor> ipairs(DType d, const std::vector<int64_t>& a,
                                 const std::vector<int64_t>& b) {
  std::vector<int64_t> x, y;
  for (int64_t p : a)
    for (int64_t q : b) x.push_back(p), y.push_back(q);
  return {ivec(d, x), ivec(d, y)};
}

std::vector<double> float_edges(DType d) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double big = d == DType::kF64 ? 1e300 : 3e38;
  return {nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3.7, -3.7,
          1e-3, 20.0, -20.0, 88.5, -100.0, 1e10, -1e10, big, -big};
}
std::vector<double> float_moderate() {
  return {0.0, -0.0, 0.25, -0.25, 0.5, -0.75, 1.0, -1.0, 1.25, -1.5, 2.0, -3.0, 3.1, -4.5, 7.0};
}
std::vector<int64_t> int_edges(DType d) {
  if (d == DType::kI64)
    return {std::numeric_limits<int64_t>::min(), -4294967296ll, -7, -1, 0, 1, 2, 7, 31, 64,
            4294967297ll, std::numeric_limits<int64_t>::max()};
  return {std::numeric_limits<int32_t>::min(), -65536, -7, -1, 0, 1, 2, 7, 31, 32, 33,
          std::numeric_limits<int32_t>::max()};
}

namespace {

// ---------------------------------------------------------------------------------------------
// Elementwise unary on edge values: one case per op and type, so a disagreement names its op.

void unary_case(CaseCtx& c, OpKind k, DType d, bool moderate) {
  Value* x = c.arg(vec(d, moderate ? float_moderate() : float_edges(d)));
  c.ret({c.b.unary(k, x)});
  bool f64_libm = k == OpKind::kSine || k == OpKind::kCosine || k == OpKind::kTan ||
                  k == OpKind::kTanh || k == OpKind::kCbrt;
  if (d == DType::kF64 && f64_libm) c.iree_cannot("iree-compile fails on f64 llvm.intr.sin/cos/... (llvm-cpu)");
  if (k == OpKind::kCbrt && d == DType::kF32) c.iree_wrong("IREE's cbrt(±inf) is NaN, not ±inf");
}

#define UNARY_F(name, kind, moderate)                                           \
  ORACLE_CASE(name##_f32) { unary_case(c, OpKind::kind, DType::kF32, moderate); } \
  ORACLE_CASE(name##_f64) { unary_case(c, OpKind::kind, DType::kF64, moderate); }

UNARY_F(negate, kNegate, false)
UNARY_F(abs, kAbs, false)
UNARY_F(sign, kSign, false)
UNARY_F(exponential, kExponential, false)
UNARY_F(exponential_minus_one, kExponentialMinusOne, false)
UNARY_F(log, kLog, false)
UNARY_F(log_plus_one, kLogPlusOne, false)
UNARY_F(logistic, kLogistic, false)
UNARY_F(tanh, kTanh, false)
UNARY_F(erf, kErf, false)
UNARY_F(sqrt, kSqrt, false)
UNARY_F(rsqrt, kRsqrt, false)
UNARY_F(cbrt, kCbrt, false)
UNARY_F(sine, kSine, true)
UNARY_F(cosine, kCosine, true)
UNARY_F(tan, kTan, true)
UNARY_F(floor, kFloor, false)
UNARY_F(ceil, kCeil, false)
UNARY_F(round_nearest_afz, kRoundNearestAfz, false)
UNARY_F(round_nearest_even, kRoundNearestEven, false)
UNARY_F(is_finite, kIsFinite, false)

ORACLE_CASE(trig_special_f32) {  // NaN and ±inf through sine/cosine/tan give NaN
  const double inf = std::numeric_limits<double>::infinity();
  Value* x = c.arg(vec(DType::kF32, {std::nan(""), inf, -inf, 0.0, -0.0}));
  c.ret({c.b.sine(x), c.b.cosine(x), c.b.tan(x)});
}

void int_unary_case(CaseCtx& c, OpKind k, DType d) {
  Value* x = c.arg(ivec(d, int_edges(d)));
  c.ret({c.b.unary(k, x)});
}
ORACLE_CASE(negate_i32) { int_unary_case(c, OpKind::kNegate, DType::kI32); }
ORACLE_CASE(abs_i32) { int_unary_case(c, OpKind::kAbs, DType::kI32); }
ORACLE_CASE(sign_i32) { int_unary_case(c, OpKind::kSign, DType::kI32); }
ORACLE_CASE(negate_i64) { int_unary_case(c, OpKind::kNegate, DType::kI64); }
ORACLE_CASE(abs_i64) { int_unary_case(c, OpKind::kAbs, DType::kI64); }
ORACLE_CASE(popcnt_i32) { int_unary_case(c, OpKind::kPopcnt, DType::kI32); }
ORACLE_CASE(popcnt_i64) { int_unary_case(c, OpKind::kPopcnt, DType::kI64); }
ORACLE_CASE(count_leading_zeros_i32) { int_unary_case(c, OpKind::kCountLeadingZeros, DType::kI32); }
ORACLE_CASE(count_leading_zeros_i64) { int_unary_case(c, OpKind::kCountLeadingZeros, DType::kI64); }
ORACLE_CASE(not_i32) { int_unary_case(c, OpKind::kNot, DType::kI32); }
ORACLE_CASE(not_i1) {
  Value* x = c.arg(ivec(DType::kI1, {0, 1, 1, 0}));
  c.ret({c.b.not_(x)});
}

// ---------------------------------------------------------------------------------------------
// Conversions.

ORACLE_CASE(convert_f32_to_i32) {  // truncation toward zero; in-range values only
  Value* x = c.arg(vec(DType::kF32, {0.0, -0.0, 0.9, -0.9, 2.5, -2.5, 3.7, -3.7, 1e6, -2e9}));
  c.ret({c.b.convert(x, DType::kI32), c.b.convert(x, DType::kI64)});
}
ORACLE_CASE(convert_int_to_float) {
  Value* x = c.arg(ivec(DType::kI32, int_edges(DType::kI32)));
  Value* y = c.arg(ivec(DType::kI64, int_edges(DType::kI64)));
  c.ret({c.b.convert(x, DType::kF32), c.b.convert(x, DType::kF64), c.b.convert(y, DType::kF32),
         c.b.convert(y, DType::kF64)});
}
ORACLE_CASE(convert_int_widths) {  // i64 -> i32 wraps modulo 2^32; i32 -> i64 sign-extends
  Value* x = c.arg(ivec(DType::kI64, int_edges(DType::kI64)));
  Value* y = c.arg(ivec(DType::kI32, int_edges(DType::kI32)));
  c.ret({c.b.convert(x, DType::kI32), c.b.convert(y, DType::kI64)});
}
ORACLE_CASE(convert_float_widths) {  // f64 -> f32 rounds to nearest even, overflows to inf
  Value* x = c.arg(vec(DType::kF64, {1.0 / 3.0, -2.0 / 3.0, 1e300, -1e300, 1e-300, 0.1,
                                      std::nan(""), -0.0, 16777217.0}));
  Value* y = c.arg(vec(DType::kF32, float_edges(DType::kF32)));
  c.ret({c.b.convert(x, DType::kF32), c.b.convert(y, DType::kF64)});
}
ORACLE_CASE(convert_bool) {  // i1 -> number is 0/1; number -> i1 is x != 0
  Value* p = c.arg(ivec(DType::kI1, {0, 1, 1, 0}));
  Value* x = c.arg(vec(DType::kF32, {0.0, -0.0, 0.5, -2.0, std::nan("")}));
  Value* i = c.arg(ivec(DType::kI32, {0, 1, -1, 7}));
  c.ret({c.b.convert(p, DType::kF32), c.b.convert(p, DType::kI32), c.b.convert(x, DType::kI1),
         c.b.convert(i, DType::kI1)});
}
ORACLE_CASE(bitcast_convert_same_width) {
  Value* x = c.arg(vec(DType::kF32, {1.0, -2.0, 0.0, -0.0, 0.1}));
  Value* i = c.arg(ivec(DType::kI64, {0, 1, -1, 4607182418800017408ll}));
  c.ret({c.b.bitcast_convert(x, tt(DType::kI32, {5})), c.b.bitcast_convert(i, tt(DType::kF64, {4}))});
}
ORACLE_CASE(reduce_precision_f32) {  // to f16's (5, 10) and bf16's (8, 7) formats
  Value* x = c.arg(vec(DType::kF32, {1.0, 1.0009765625, 1.00048828125, 1.000732421875, 65504.0,
                                      65520.0, 1e5, -1e5, 3.14159265, 1e-8, std::nan(""),
                                      std::numeric_limits<double>::infinity(), -0.0}));
  c.ret({c.b.reduce_precision(x, 5, 10), c.b.reduce_precision(x, 8, 7)});
}

// ---------------------------------------------------------------------------------------------
// Elementwise binary on all pairs of edge values.

void binary_f_case(CaseCtx& c, OpKind k, DType d) {
  if (d == DType::kF64 && (k == OpKind::kAtan2 || k == OpKind::kRemainder))
    c.iree_cannot("iree-compile fails on f64 atan2/frem (llvm-cpu)");
  else if (k == OpKind::kAtan2)
    c.iree_wrong("IREE's atan2 is wrong on ±0 and ±inf (atan2(0, 0) = NaN, atan2(-inf, -0) = +pi)");
  if (k == OpKind::kPower)
    c.iree_wrong("IREE's power is NaN for x^0, 0^y, x^±inf (exp(y log x) lowering)");
  std::vector<double> e = {std::nan(""), std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(), 0.0, -0.0, 1.0, -1.0,
                           0.5, 2.0, -2.5, 3.0, 7.25, -100.0};
  auto [x, y] = pairs(d, e, e);
  Value* a = c.arg(x);  // (function arguments have no evaluation order: name them first)
  Value* b = c.arg(y);
  c.ret({c.b.binary(k, a, b)});
}
#define BINARY_F(name, kind)                                                       \
  ORACLE_CASE(name##_f32) { binary_f_case(c, OpKind::kind, DType::kF32); }         \
  ORACLE_CASE(name##_f64) { binary_f_case(c, OpKind::kind, DType::kF64); }

BINARY_F(add, kAdd)
BINARY_F(subtract, kSubtract)
BINARY_F(multiply, kMultiply)
BINARY_F(divide, kDivide)
BINARY_F(remainder, kRemainder)
BINARY_F(power, kPower)
BINARY_F(maximum, kMaximum)
BINARY_F(minimum, kMinimum)
BINARY_F(atan2, kAtan2)

void binary_i_case(CaseCtx& c, OpKind k, DType d) {
  auto e = int_edges(d);
  auto [x, y] = ipairs(d, e, e);
  Value* a = c.arg(x);  // (function arguments have no evaluation order: name them first)
  Value* b = c.arg(y);
  c.ret({c.b.binary(k, a, b)});
}
#define BINARY_I(name, kind)                                                       \
  ORACLE_CASE(name##_i32) { binary_i_case(c, OpKind::kind, DType::kI32); }         \
  ORACLE_CASE(name##_i64) { binary_i_case(c, OpKind::kind, DType::kI64); }

BINARY_I(add, kAdd)  // wraps modulo 2^n
BINARY_I(subtract, kSubtract)
BINARY_I(multiply, kMultiply)
BINARY_I(maximum, kMaximum)
BINARY_I(minimum, kMinimum)
BINARY_I(and, kAnd)
BINARY_I(or, kOr)
BINARY_I(xor, kXor)
BINARY_I(shift_left, kShiftLeft)  // amounts < 0 or >= bits: 0 (arithmetic: sign fill)
BINARY_I(shift_right_arithmetic, kShiftRightArithmetic)
BINARY_I(shift_right_logical, kShiftRightLogical)

// Integer division and remainder without the divisor 0 and without INT_MIN / -1 (those are
// checked separately in int_divide_edge so that an implementation-defined answer names itself).
void int_div_case(CaseCtx& c, OpKind k, DType d) {
  std::vector<int64_t> num = int_edges(d), den;
  for (int64_t v : num)
    if (v != 0 && v != -1) den.push_back(v);
  auto [x, y] = ipairs(d, num, den);
  Value* a = c.arg(x);
  Value* b = c.arg(y);
  c.ret({c.b.binary(k, a, b)});
}
ORACLE_CASE(divide_i32) { int_div_case(c, OpKind::kDivide, DType::kI32); }
ORACLE_CASE(divide_i64) { int_div_case(c, OpKind::kDivide, DType::kI64); }
ORACLE_CASE(remainder_i32) { int_div_case(c, OpKind::kRemainder, DType::kI32); }
ORACLE_CASE(remainder_i64) { int_div_case(c, OpKind::kRemainder, DType::kI64); }
ORACLE_CASE(int_divide_edge) {  // x / 0, x % 0, INT_MIN / -1, INT_MIN % -1
  auto [x, y] = ipairs(DType::kI32, {std::numeric_limits<int32_t>::min(), -7, 0, 7},
                       {0, -1});
  Value* a = c.arg(x);
  Value* b = c.arg(y);
  c.ret({c.b.divide(a, b), c.b.remainder(a, b)});
}
ORACLE_CASE(power_i32) {  // integer power: exact, negative exponents per the spec
  auto [x, y] = ipairs(DType::kI32, {-3, -2, -1, 0, 1, 2, 3}, {0, 1, 2, 3, 5});
  Value* a = c.arg(x);
  Value* b = c.arg(y);
  c.ret({c.b.power(a, b)});
}
ORACLE_CASE(logic_i1) {
  auto [x, y] = ipairs(DType::kI1, {0, 1}, {0, 1});
  Value* a = c.arg(x);
  Value* b = c.arg(y);
  c.ret({c.b.and_(a, b), c.b.or_(a, b), c.b.xor_(a, b)});
}

// ---------------------------------------------------------------------------------------------
// compare (every direction, FLOAT and TOTALORDER on floats, SIGNED on ints), clamp, select.

void compare_case(CaseCtx& c, DType d, std::string_view type) {
  std::vector<double> e = {std::nan(""), -std::numeric_limits<double>::infinity(), -1.0, -0.0,
                           0.0, 2.5, std::numeric_limits<double>::infinity()};
  auto [x, y] = pairs(d, e, e);
  Value* a = c.arg(x);
  Value* b = c.arg(y);
  std::vector<Value*> out;
  for (const char* dir : {"EQ", "NE", "GE", "GT", "LE", "LT"}) out.push_back(c.b.compare(a, b, dir, type));
  c.ret(out);
}
ORACLE_CASE(compare_float_f32) { compare_case(c, DType::kF32, "FLOAT"); }
ORACLE_CASE(compare_float_f64) { compare_case(c, DType::kF64, "FLOAT"); }
ORACLE_CASE(compare_totalorder_f32) { compare_case(c, DType::kF32, "TOTALORDER"); }
ORACLE_CASE(compare_signed_i32) {
  auto e = int_edges(DType::kI32);
  auto [x, y] = ipairs(DType::kI32, e, e);
  Value* a = c.arg(x);
  Value* b = c.arg(y);
  std::vector<Value*> out;
  for (const char* dir : {"EQ", "NE", "GE", "GT", "LE", "LT"}) out.push_back(c.b.compare(a, b, dir));
  c.ret(out);
}
ORACLE_CASE(compare_i1) {  // i1 compares as unsigned: false < true
  auto [x, y] = ipairs(DType::kI1, {0, 1}, {0, 1});
  Value* a = c.arg(x);
  Value* b = c.arg(y);
  c.ret({c.b.compare(a, b, "LT"), c.b.compare(a, b, "GE")});
}
ORACLE_CASE(clamp_f32) {  // tensor bounds, then scalar bounds broadcast
  Value* lo = c.arg(vec(DType::kF32, {0.0, -1.0, 2.0, std::nan(""), 0.0, 1.0}));
  Value* x = c.arg(vec(DType::kF32, {-3.0, 0.5, 1.0, 1.0, std::nan(""), 5.0}));
  Value* hi = c.arg(vec(DType::kF32, {1.0, 1.0, 3.0, 2.0, 1.0, 4.0}));
  Value* slo = c.b.scalar(-0.5, DType::kF32);
  Value* shi = c.b.scalar(0.75, DType::kF32);
  c.ret({c.b.clamp(lo, x, hi), c.b.clamp(slo, x, shi)});
}
ORACLE_CASE(clamp_i32) {
  Value* x = c.arg(ivec(DType::kI32, int_edges(DType::kI32)));
  c.ret({c.b.clamp(c.b.scalar(-7, DType::kI32), x, c.b.scalar(31, DType::kI32))});
}
ORACLE_CASE(select_tensor_and_scalar_pred) {
  Value* p = c.arg(c.bools({3, 4}));
  Value* x = c.arg(c.normal(DType::kF32, {3, 4}));
  Value* y = c.arg(c.normal(DType::kF32, {3, 4}));
  Value* s = c.arg(ivec(DType::kI1, {1}));
  Value* s0 = c.b.reshape(s, {});
  c.ret({c.b.select(p, x, y), c.b.select(s0, y, x)});
}
ORACLE_CASE(zero_size_elementwise) {  // tensors with a 0 dimension flow through unchanged
  Value* x = c.arg(Tensor(DType::kF32, {0, 3}));
  Value* y = c.arg(Tensor(DType::kF32, {0, 3}));
  Value* s = c.b.add(c.b.exponential(x), y);
  c.ret({s, c.b.reduce(s, c.b.scalar(1.5, DType::kF32), {0}, OpKind::kAdd)});
}

}  // namespace

// ---------------------------------------------------------------------------------------------

// Cases also written in MLIR's generic op form (`<case>__generic`): one per syntax family.
const std::set<std::string> kGenericToo = {
    "reduce_argmax_variadic", "conv2d_strided_dilated", "conv2d_batch_groups", "gather_2d_windows",
    "scatter_add_duplicates_i32", "sort_stable_key_value", "while_fori", "if_both_ways",
    "case_in_and_out_of_range", "call_private_function", "select_and_scatter_maxpool_grad",
    "reduce_window_dilated_sum", "dot_batch_middle", "compare_totalorder_f32",
    "constants_special_values", "pad_negative_interior", "rng_three_fry", "tuple_and_barrier",
    "net_cnn_forward", "map_two_inputs", "dynamic_slice_clamped", "iota_types", "convert_bool",
    "reduce_precision_f32", "bitcast_convert_same_width", "all_reduce_single_replica",
    "gather_batching_dims", "slice_strided", "reshape_transpose", "broadcast_in_dim"};

int run(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: oracle_cases OUTDIR [NAME_REGEX]\n";
    return 2;
  }
  namespace fs = std::filesystem;
  fs::path out = argv[1];
  fs::create_directories(out);
  std::regex only(argc == 3 ? argv[2] : ".*");
  int written = 0, failed = 0;
  auto write_case = [&](const std::string& name, const CaseCtx& c, const std::string& text) {
    std::ofstream(out / (name + ".mlir")) << text;
    for (int i = 0; fs::remove(out / (name + ".in" + std::to_string(i) + ".npy")); ++i) {
    }  // inputs of an older version of the case
    for (size_t i = 0; i < c.inputs.size(); ++i)
      write_npy((out / (name + ".in" + std::to_string(i) + ".npy")).string(), c.inputs[i]);
    fs::path meta = out / (name + ".json");
    if (!c.meta.empty())
      std::ofstream(meta) << c.meta.dump(1) << "\n";
    else
      fs::remove(meta);
    ++written;
  };
  for (const auto& def : case_registry()) {
    if (!std::regex_search(def.name, only)) continue;
    try {
      CaseCtx c(def.name);
      def.fn(c);
      hlo::verify_module(c.m);
      write_case(def.name, c, hlo::print_module(c.m));
      if (kGenericToo.count(def.name))
        write_case(def.name + "__generic", c, hlo::print_module(c.m, hlo::PrintOptions{true}));
    } catch (const std::exception& e) {
      std::cerr << "oracle_cases: case " << def.name << " could not be built: " << e.what() << "\n";
      ++failed;
    }
  }
  for (const auto& g : kGenericToo) {
    bool known = false;
    for (const auto& def : case_registry()) known = known || def.name == g;
    if (!known) {
      std::cerr << "oracle_cases: kGenericToo names an unknown case " << g << "\n";
      ++failed;
    }
  }
  std::cerr << "oracle_cases: wrote " << written << " cases to " << out.string();
  if (failed) std::cerr << "; " << failed << " failed to build";
  std::cerr << "\n";
  return failed ? 1 : 0;
}

}  // namespace netspec::oracles

int main(int argc, char** argv) { return netspec::oracles::run(argc, argv); }
