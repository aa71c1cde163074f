// exec/cpu/kernels/vmath.h: each vector variant this CPU can run (AVX-512, AVX2) against the scalar
// functions of exec/scalar_ops.h (what the ref interpreter computes), for exp, log, log1p, tanh,
// logistic and erf, on a sweep over the whole float range (every 241st bit pattern) plus edge
// cases: ±0, denormals, ±inf, NaN, FLT_MAX, the overflow / underflow thresholds of exp, the
// branch points of tanh and log1p's (-1, the √½ and √2 edges of 1 + x). At most 2 ulp apart, the
// same NaN-ness, and equal infinities.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <dnnl.hpp>
#include <limits>
#include <string>
#include <vector>

#include "exec/cpu/kernels/vmath.h"
#include "exec/scalar_ops.h"

namespace netspec::exec::cpu {
namespace {

using hlo::OpKind;

// Distance in representable floats (±0 are the same point).
int64_t ulp_diff(float a, float b) {
  auto key = [](float f) {
    int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  return std::llabs(key(a) - key(b));
}

std::vector<float> sweep_values() {
  std::vector<float> v;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 241) v.push_back(std::bit_cast<float>(uint32_t(b)));
  const float inf = std::numeric_limits<float>::infinity();
  for (float x :
       {0.f,         -0.f,       inf,         -inf,        std::numeric_limits<float>::quiet_NaN(),
        FLT_MAX,     -FLT_MAX,   FLT_MIN,     -FLT_MIN,    std::numeric_limits<float>::denorm_min(),
        1e-40f,      -1e-40f,    88.7228f,    88.72284f,   88.7229f,
        89.f,        100.f,      -87.33f,     -87.34f,     -103.9f,
        -103.98f,    -104.f,     -200.f,      0.625f,      -0.625f,
        0.62499994f, 9.f,        9.02f,       -9.02f,      1.f,
        -1.f,        1.0000001f, 0.99999994f, 0.70710677f, 1.4142135f,
        1e-8f,       -1e-8f,     30.f,        -30.f,       -0.99999994f,
        -0.5f,       -0.29289323f, 0.41421354f, 6e-8f,     -6e-8f,      3e7f,  1e38f})
    v.push_back(x);
  for (float x = -110.f; x <= 110.f; x += 0.0137f) v.push_back(x);
  return v;
}

template <OpKind K>
void expect_close(const char* isa, VecUnaryFn f, const std::vector<float>& xs) {
  ASSERT_NE(f, nullptr) << isa;
  std::vector<float> got(xs.size());
  f(got.data(), xs.data(), static_cast<int64_t>(xs.size()));
  int64_t worst = 0, bad = 0;
  float worst_x = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float want = Scalar<K>::apply(xs[i]), g = got[i];
    bool ok;
    int64_t d = 0;
    if (std::isnan(want) || std::isnan(g)) {
      ok = std::isnan(want) && std::isnan(g);
    } else if (std::isinf(want) || std::isinf(g)) {
      ok = want == g;
    } else {
      d = ulp_diff(g, want);
      ok = d <= 2;
    }
    if (d > worst) worst = d, worst_x = xs[i];
    if (!ok && ++bad <= 5)
      ADD_FAILURE() << isa << " " << op_name(K) << "(" << xs[i] << " = 0x" << std::hex
                    << std::bit_cast<uint32_t>(xs[i]) << std::dec << ") = " << g << ", scalar "
                    << want;
  }
  EXPECT_EQ(bad, 0) << isa << " " << op_name(K) << ": " << bad << " values off";
  if (std::getenv("NETSPEC_PRINT_ERR"))
    std::printf("%s %s: worst %lld ulp at %.9g\n", isa, std::string(op_name(K)).c_str(),
                static_cast<long long>(worst), worst_x);
}

void check_variant(const char* isa, const VecMath& m) {
  const std::vector<float> xs = sweep_values();
  expect_close<OpKind::kExponential>(isa, m.exp, xs);
  expect_close<OpKind::kLog>(isa, m.log, xs);
  expect_close<OpKind::kTanh>(isa, m.tanh, xs);
  expect_close<OpKind::kLogistic>(isa, m.logistic, xs);
  expect_close<OpKind::kErf>(isa, m.erf, xs);  // the scalar sequence: 0 ulp expected, 2 allowed
  expect_close<OpKind::kLogPlusOne>(isa, m.log1p, xs);
  // In place (d == a), and lengths that end in a partial vector.
  std::vector<float> a = {0.5f, -3.f, 7.f, 1e-3f, 2.f}, b = a;
  m.exp(b.data(), b.data(), 5);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_LE(ulp_diff(b[i], std::exp(a[i])), 2) << isa;
}

TEST(CpuVecMath, Avx512WithinTwoUlpOfScalar) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq") ||
      !__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512vl"))
    GTEST_SKIP() << "this CPU has no AVX-512";
  check_variant("avx512", vec_math_avx512());
}

TEST(CpuVecMath, Avx2WithinTwoUlpOfScalar) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "this CPU has no AVX2 + FMA";
  check_variant("avx2", vec_math_avx2());
}

// The AVX2 exp adds n to y's exponent where every lane of a block has a normal result and takes
// the two-halves product otherwise; both, and its scalar tail, must give the same bits. Blocks of
// 32 and 8 mixing normal, denormal, overflowing and NaN lanes against one call per value.
TEST(CpuVecMath, Avx2ExpBlocksEqualOneValueAtATime) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "this CPU has no AVX2 + FMA";
  const VecUnaryFn f = vec_math_avx2().exp;
  ASSERT_NE(f, nullptr);
  std::vector<float> xs;
  for (int i = 0; i < 4000; ++i) xs.push_back(-120.f + 0.0571f * float(i));  // [-120, 108]
  for (size_t i = 0; i < xs.size(); i += 401) xs[i] = std::numeric_limits<float>::quiet_NaN();
  for (size_t i = 5; i < xs.size(); i += 53) xs[i] = -xs[i];  // normal lanes beside edge ones
  std::vector<float> got(xs.size());
  f(got.data(), xs.data(), static_cast<int64_t>(xs.size()));
  int64_t fast = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    float one;
    f(&one, &xs[i], 1);
    if (std::isnan(one)) {
      EXPECT_TRUE(std::isnan(got[i])) << xs[i];
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(one)) << "exp(" << xs[i] << ")";
      fast += std::fabs(xs[i]) < 80.f;
    }
  }
  EXPECT_GT(fast, 2000);  // most blocks take the exponent-add path
}

TEST(CpuVecMath, VariantFollowsTheCpuFound) {
  const char* off = std::getenv("NETSPEC_SCALAR_MATH");
  if (off && *off && std::string(off) != "0") GTEST_SKIP() << "NETSPEC_SCALAR_MATH is set";
  __builtin_cpu_init();
  const std::string isa = vec_math_isa();
  // ONEDNN_MAX_CPU_ISA=AVX2 (the ctest exec_capped_avx2) caps netspec's choice with oneDNN's.
  const unsigned onednn = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const unsigned avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  if ((onednn & avx512) == avx512 && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    EXPECT_EQ(isa, "avx512");
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    EXPECT_EQ(isa, "avx2");
  else
    EXPECT_EQ(isa, "scalar");
  EXPECT_EQ(vec_unary(OpKind::kExponential) != nullptr, isa != "scalar");
  EXPECT_EQ(vec_unary(OpKind::kLogPlusOne) != nullptr, isa != "scalar");
  EXPECT_EQ(vec_unary(OpKind::kSqrt), nullptr);
}

}  // namespace
}  // namespace netspec::exec::cpu
