// Op coverage and the shared scalar-op table: every op has a ref kernel (or is one that run_block
// handles itself), and the cpu executor's elementwise and fused kernels, which inline the same
// exec/scalar_ops.h math as the ref kernels, agree with them bit for bit on edge values (NaN,
// -0, infinities, INT_MIN, division by zero, over-wide shifts). f32 exp, log, tanh and logistic
// run on vector kernels (exec/cpu/kernels/vmath.h) where the CPU has them: within 2 ulp there.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/kernels/vmath.h"
#include "exec/ref/interpreter.h"
#include "exec/scalar_ops.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::OpKind;

TEST(OpCoverage, EveryOpHasARefKernel) {
  for (size_t i = 0; i < hlo::kNumOpKinds; ++i) {
    const auto k = static_cast<OpKind>(i);
    if (exec::ref::run_by_block(k)) {
      EXPECT_EQ(exec::ref::kernel_for(k), nullptr) << op_name(k);
      continue;
    }
    EXPECT_NE(exec::ref::kernel_for(k), nullptr) << op_name(k) << " has no ref kernel";
  }
}

// Edge values per element type; each binary case pairs every value with every value.
std::vector<double> float_edges() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  return {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 3.75, 1e-30, -7e20, inf, -inf, nan, -nan};
}
std::vector<int64_t> int_edges(DType t) {
  if (t == DType::kI32)
    return {0,
            1,
            -1,
            2,
            -7,
            31,
            32,
            33,
            123456,
            std::numeric_limits<int32_t>::min(),
            std::numeric_limits<int32_t>::max()};
  if (t == DType::kI64)
    return {0,
            1,
            -1,
            3,
            -9,
            63,
            64,
            65,
            std::numeric_limits<int64_t>::min(),
            std::numeric_limits<int64_t>::max()};
  return {0, 1, 2, 5, 31, 32, 33, 4000000000LL};  // ui32
}

Tensor edge_tensor(DType t, bool lhs, size_t n_edges) {
  std::vector<double> fv = float_edges();
  std::vector<int64_t> iv = int_edges(t);
  std::vector<double> v;
  for (size_t a = 0; a < n_edges; ++a)
    for (size_t b = 0; b < n_edges; ++b) {
      size_t k = lhs ? a : b;
      v.push_back(is_float(t) ? fv[k] : static_cast<double>(iv[k]));
    }
  if (!is_float(t)) {
    std::vector<int64_t> w(v.size());
    for (size_t i = 0; i < v.size(); ++i) w[i] = static_cast<int64_t>(v[i]);
    if (t == DType::kUI32) {
      std::vector<uint64_t> u(w.begin(), w.end());
      return make(t, {static_cast<int64_t>(u.size())}, u);
    }
    return make(t, {static_cast<int64_t>(w.size())}, w);
  }
  return make(t, {static_cast<int64_t>(v.size())}, v);
}

// Equal bytes, except that any NaN equals any NaN: which NaN an IEEE operation returns when both
// operands are NaNs (x + y with x = -NaN, y = NaN) is unspecified, in IEEE 754 as in StableHLO,
// and GCC swaps the operands of a commutative op as it likes (on a Zen 4 build ref's scalar add
// returned y's NaN and the cpu kernel x's). With ulp > 0 (f32 only), NaN where want has NaN and
// within `ulp` floats elsewhere.
template <typename F, typename Bits>
void expect_same_floats(const Tensor& got, const Tensor& want, const std::string& what) {
  for (int64_t i = 0; i < got.numel(); ++i) {
    const F g = got.data<F>()[i], w = want.data<F>()[i];
    if (std::isnan(g) && std::isnan(w)) continue;
    Bits gb, wb;
    std::memcpy(&gb, &g, sizeof g);
    std::memcpy(&wb, &w, sizeof w);
    if (gb != wb) {
      ADD_FAILURE() << what << " element " << i << ": cpu bits " << std::hex << gb << " ref " << wb;
      return;
    }
  }
}
void expect_same_bytes(const Tensor& got, const Tensor& want, const std::string& what,
                       int64_t ulp = 0) {
  ASSERT_EQ(got.type_str(), want.type_str()) << what;
  if (got.dtype() == DType::kF64) return expect_same_floats<double, uint64_t>(got, want, what);
  if (got.dtype() != DType::kF32) {
    EXPECT_EQ(std::memcmp(got.raw(), want.raw(), got.nbytes()), 0) << what;
    return;
  }
  if (ulp == 0) return expect_same_floats<float, uint32_t>(got, want, what);
  auto key = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  for (int64_t i = 0; i < got.numel(); ++i) {
    const float g = got.data<float>()[i], w = want.data<float>()[i];
    if (std::isnan(w) || std::isnan(g))
      EXPECT_EQ(std::isnan(w), std::isnan(g)) << what << " element " << i;
    else
      EXPECT_LE(std::llabs(key(g) - key(w)), ulp)
          << what << " element " << i << ": " << g << " vs " << w;
  }
}

// Does the type rule accept body on these inputs? (The scalar domains are wider than some type
// rules, e.g. abs of an unsigned integer.)
bool verifies(const std::vector<Tensor>& in, const BodyFn& body) {
  std::vector<Type> ts;
  for (auto& t : in) ts.push_back(type_of(t));
  try {
    make_module(ts, body);
    return true;
  } catch (const Error&) {
    return false;
  }
}

int g_checked = 0;  // cases check_bitwise ran

// Runs body on ref and cpu; the cpu plan must run it without a ref step; bytes must agree (any
// NaN equals any NaN; f32 results within `ulp` floats when ulp > 0).
void check_bitwise(const std::vector<Tensor>& in, const BodyFn& body, const std::string& what,
                   int64_t ulp = 0) {
  ++g_checked;
  std::vector<Type> ts;
  for (auto& t : in) ts.push_back(type_of(t));
  auto st = exec::cpu::plan_stats(*make_module(ts, body)->funcs[0]);
  EXPECT_EQ(st.ref_steps, 0) << what << ": fell back to ref for " << st.fallback_ops;
  auto want = run_fn("ref", in, body);
  auto got = run_fn("cpu", in, body);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) expect_same_bytes(got[i], want[i], what, ulp);
}

template <OpKind K>
void check_binary_kind() {
  for (DType t : {DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kUI32}) {
    if (!exec::in_domain(exec::Scalar<K>::kDomain, t)) continue;
    size_t n = is_float(t) ? float_edges().size() : int_edges(t).size();
    Tensor a = edge_tensor(t, true, n), b = edge_tensor(t, false, n);
    std::string what = fmt::format("{} {}", op_name(K), dtype_name(t));
    BodyFn body = [](Builder& bb, const Values& v) { return Values{bb.binary(K, v[0], v[1])}; };
    if (verifies({a, b}, body)) check_bitwise({a, b}, body, what);
  }
}
template <OpKind K>
void check_unary_kind() {
  for (DType t : {DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kUI32}) {
    if (!exec::in_domain(exec::Scalar<K>::kDomain, t)) continue;
    size_t n = is_float(t) ? float_edges().size() : int_edges(t).size();
    Tensor a = edge_tensor(t, true, n);
    std::string what = fmt::format("{} {}", op_name(K), dtype_name(t));
    BodyFn body = [](Builder& bb, const Values& v) { return Values{bb.unary(K, v[0])}; };
    const int64_t ulp = t == DType::kF32 && exec::cpu::vec_unary(K) ? 2 : 0;
    if (verifies({a}, body)) check_bitwise({a}, body, what, ulp);
  }
}

TEST(ScalarOps, CpuElementwiseKernelsEqualRefBitForBit) {
#define CHECK_UNARY(KIND) check_unary_kind<OpKind::KIND>();
#define CHECK_BINARY(KIND) check_binary_kind<OpKind::KIND>();
  NETSPEC_SCALAR_UNARY_KINDS(CHECK_UNARY)
  NETSPEC_SCALAR_BINARY_KINDS(CHECK_BINARY)
#undef CHECK_UNARY
#undef CHECK_BINARY
  // 38 kinds over their verified element types (f32/f64 for most float ops, the integer types
  // for the bit ops): far more than one case per kind.
  EXPECT_GE(g_checked, 80);
}

TEST(ScalarOps, FusedChainsEqualRefBitForBit) {
  const size_t n = float_edges().size();
  Tensor a = edge_tensor(DType::kF32, true, n), b = edge_tensor(DType::kF32, false, n);
  // Each binary op's result feeds the next op: one fused group over all of them.
  auto body = [](Builder& bb, const Values& v) {
    Value* x = v[0];
    for (OpKind k : {OpKind::kMaximum, OpKind::kAdd, OpKind::kMinimum, OpKind::kMultiply,
                     OpKind::kSubtract, OpKind::kDivide})
      x = bb.binary(k, x, v[1]);
    Value* m = bb.compare(x, v[1], "LT");
    Value* s = bb.select(m, bb.unary(OpKind::kTanh, x), bb.unary(OpKind::kAbs, v[0]));
    return Values{bb.unary(OpKind::kNegate, s), m};
  };
  std::vector<Type> ts = {type_of(a), type_of(b)};
  auto st = exec::cpu::plan_stats(*make_module(ts, body)->funcs[0]);
  EXPECT_LE(st.steps, 2) << "the chain should run as one fused group";
  check_bitwise({a, b}, body, "fused chain", exec::cpu::vec_unary(OpKind::kTanh) ? 2 : 0);
}

TEST(ScalarOps, ClampAndCompareEqualRef) {
  const size_t n = float_edges().size();
  Tensor a = edge_tensor(DType::kF32, true, n), b = edge_tensor(DType::kF32, false, n);
  Tensor lo = f32({}, {-1.0}), hi = f32({}, {2.0});
  check_bitwise(
      {lo, a, hi}, [](Builder& bb, const Values& v) { return Values{bb.clamp(v[0], v[1], v[2])}; },
      "clamp");
  for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"})
    check_bitwise(
        {a, b}, [dir](Builder& bb, const Values& v) { return Values{bb.compare(v[0], v[1], dir)}; },
        std::string("compare ") + dir);
}

}  // namespace
}  // namespace netspec::testing
