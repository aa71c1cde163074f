// The vector math kernels of vmath.h, written once as branch-free loops that the compiler
// vectorises for the ISA of the including file (vmath_avx512.cpp, vmath_avx2.cpp). Only include
// it from those files, inside an anonymous namespace (each copy is compiled for another ISA).
// exp: f32 Cody-Waite reduction and polynomial (logistic: the same in double); log: x = m·2^e with
// m in [√½, √2), log(m) by Cephes logf's polynomial; log1p: fdlibm's method (vm_log1p); tanh: x + x³·P(x²) for |x| < 0.625, else 1 - 2
// / (e^2|x| + 1); logistic: 1 / (1 + e^-x) as the scalar code computes it; erf: the scalar
// sequence.
#include <bit>
#include <cstdint>

// exp's argument clamped to [-104, 89] (e^x is 0 or inf beyond), NaN replaced by 0.
inline float exp_arg(float x) {
  float c = x != x ? 0.f : x;
  c = c < -104.f ? -104.f : c;
  return c > 89.f ? 89.f : c;
}

inline float vm_exp_d(float x) {
  // In double: x = n·ln2 + r, |r| <= ln2/2, e^r by its Taylor series to r^10 (relative error
  // < 1e-12), times 2^n (a normal double for every float result, denormals included), then one
  // rounding to float: the correctly rounded result except on rare near-ties, as glibc's expf.
  const bool nan = x != x;
  const float xx = x + x;
  const float c = exp_arg(x);
  const double xd = static_cast<double>(c);
  constexpr double kMagic = 6755399441055744.0;  // 1.5·2^52: t's low bits hold round(x/ln2)
  const double t = __builtin_fma(xd, 1.4426950408889634, kMagic);
  const double fn = t - kMagic;
  const double r = __builtin_fma(fn, -0.6931471805599453, xd);
  double p = 1.0 / 3628800.0;
  p = __builtin_fma(p, r, 1.0 / 362880.0);
  p = __builtin_fma(p, r, 1.0 / 40320.0);
  p = __builtin_fma(p, r, 1.0 / 5040.0);
  p = __builtin_fma(p, r, 1.0 / 720.0);
  p = __builtin_fma(p, r, 1.0 / 120.0);
  p = __builtin_fma(p, r, 1.0 / 24.0);
  p = __builtin_fma(p, r, 1.0 / 6.0);
  p = __builtin_fma(p, r, 0.5);
  p = __builtin_fma(p, r, 1.0);
  p = __builtin_fma(p, r, 1.0);
  const int64_t n = std::bit_cast<int64_t>(t) - std::bit_cast<int64_t>(kMagic);
  const double scale = std::bit_cast<double>(static_cast<uint64_t>(n + 1023) << 52);
  const float e = static_cast<float>(p * scale);
  return nan ? xx : e;
}

// exp in f32: x = n·ln2 + r (Cody-Waite), e^r by Cephes expf's polynomial, times 2^n in two
// halves (so that denormal results are reached): within 1 ulp of glibc's expf.
inline float vm_exp(float x) {
  const bool nan = x != x;
  const float xx = x + x;
  const float c = exp_arg(x);
  const float fn = (c * 1.44269504088896341f + 12582912.f) - 12582912.f;  // round(x / ln2)
  float r = __builtin_fmaf(fn, -0.693359375f, c);
  r = __builtin_fmaf(fn, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = __builtin_fmaf(p, r, 1.3981999507e-3f);
  p = __builtin_fmaf(p, r, 8.3334519073e-3f);
  p = __builtin_fmaf(p, r, 4.1665795894e-2f);
  p = __builtin_fmaf(p, r, 1.6666665459e-1f);
  p = __builtin_fmaf(p, r, 5.0000001201e-1f);
  const float y = __builtin_fmaf(p * r, r, r) + 1.f;
  const int32_t n = static_cast<int32_t>(fn);
  const int32_t n1 = n >> 1, n2 = n - n1;  // each in [-75, 65]: 2^n1, 2^n2 are normal floats
  const float s1 = std::bit_cast<float>(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = std::bit_cast<float>(static_cast<uint32_t>(n2 + 127) << 23);
  const float e = y * s1 * s2;
  return nan ? xx : e;
}

inline float vm_log(float x) {
  uint32_t bits = std::bit_cast<uint32_t>(x);
  const bool denormal = x > 0.f && x < 1.17549435e-38f;
  // Denormals: scale by 2^23 first, take 23 off the exponent.
  const float xs = denormal ? x * 8388608.f : x;
  bits = std::bit_cast<uint32_t>(xs);
  float e = static_cast<float>(static_cast<int32_t>(bits >> 23) - 126) - (denormal ? 23.f : 0.f);
  float m = std::bit_cast<float>((bits & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
  const bool small = m < 0.707106781186547524f;
  e = small ? e - 1.f : e;
  m = small ? m + m - 1.f : m - 1.f;
  const float z = m * m;
  float y = 7.0376836292e-2f;
  y = __builtin_fmaf(y, m, -1.1514610310e-1f);
  y = __builtin_fmaf(y, m, 1.1676998740e-1f);
  y = __builtin_fmaf(y, m, -1.2420140846e-1f);
  y = __builtin_fmaf(y, m, 1.4249322787e-1f);
  y = __builtin_fmaf(y, m, -1.6668057665e-1f);
  y = __builtin_fmaf(y, m, 2.0000714765e-1f);
  y = __builtin_fmaf(y, m, -2.4999993993e-1f);
  y = __builtin_fmaf(y, m, 3.3333331174e-1f);
  y = y * m * z;
  y = __builtin_fmaf(e, -2.12194440e-4f, y);
  y = __builtin_fmaf(-0.5f, z, y);
  float r = m + y;
  r = __builtin_fmaf(e, 0.693359375f, r);
  // Special values as the scalar log: log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN.
  r = x == 0.f ? -__builtin_inff() : r;
  r = x < 0.f ? __builtin_nanf("") : r;
  r = x == __builtin_inff() ? x : r;
  return x != x ? x + x : r;
}

inline float vm_tanh(float x) {
  const float a = x < 0.f ? -x : x;
  // Small |x|: x + x·z·P(z), z = x² (Cephes tanhf).
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = __builtin_fmaf(p, z, 2.06390887954e-2f);
  p = __builtin_fmaf(p, z, -5.37397155531e-2f);
  p = __builtin_fmaf(p, z, 1.33314422036e-1f);
  p = __builtin_fmaf(p, z, -3.33332819422e-1f);
  const float small = __builtin_fmaf(p * z, x, x);
  // Large |x|: 1 - 2 / (e^2|x| + 1), sign restored; e^2|x| overflows to inf -> 1.
  const float t = 1.f - 2.f / (vm_exp(a + a) + 1.f);
  const float big = x < 0.f ? -t : t;
  return a < 0.625f ? small : (x != x ? x + x : big);
}

// 1 / (1 + e^-x) as the scalar code computes it, with the (nearly correctly rounded) double exp:
// an exp 1 ulp off moves 1 + e^-x to another float near x = -16.6, 4 ulp in the result.
inline float vm_logistic(float x) { return 1.f / (1.f + vm_exp_d(-x)); }

// erf: the scalar code's sequence (exec/scalar_ops.h, Scalar<kErf>), compiled for this file's ISA.
inline float vm_erf(float x) {
  const float c = x < -4.f ? -4.f : (x > 4.f ? 4.f : x);  // NaN stays NaN
  const float z = c * c;
  float p = kErfP[0], q = kErfQ[0];
  // Unrolled so that the caller's loop vectorises (a loop inside it would stay scalar).
#pragma GCC unroll 8
  for (int i = 1; i < kErfPLen; ++i) p = __builtin_fmaf(p, z, kErfP[i]);
#pragma GCC unroll 8
  for (int i = 1; i < kErfQLen; ++i) q = __builtin_fmaf(q, z, kErfQ[i]);
  return c * p / q;
}

// log1p (fdlibm's log1pf method, branch-free): u = 1 + x rounded, c = its rounding error over u
// (k < 25; beyond, 1 is below u's last bit), u = 2^k·(1 + f) with 1 + f in [√½, √2), log(1 + f)
// = f - f²/2 + s·(f²/2 + R(s²)), s = f / (2 + f), plus k·ln2 in two parts and c. Tiny x come out
// as x itself (u = 1: f = 0, c = x); -0, -1, x < -1, inf and NaN as the scalar log1p.
inline float vm_log1p(float x) {
  const float u = 1.f + x;
  // Offset so that k counts from √½ (0x3f3504f3): the mantissa then lands in [√½, √2).
  const uint32_t iu = std::bit_cast<uint32_t>(u) + (0x3f800000u - 0x3f3504f3u);
  const int32_t k = static_cast<int32_t>(iu >> 23) - 0x7f;
  float c = k >= 2 ? 1.f - (u - x) : x - (u - 1.f);
  c = k < 25 ? c / u : 0.f;
  const float f = std::bit_cast<float>((iu & 0x007fffffu) + 0x3f3504f3u) - 1.f;
  const float s = f / (2.f + f);
  const float z = s * s, w = z * z;
  const float t1 = w * (0.40000972152f + w * 0.24279078841f);
  const float t2 = z * (0.66666662693f + w * 0.28498786688f);
  const float hfsq = 0.5f * f * f, dk = static_cast<float>(k);
  float r = s * (hfsq + t2 + t1) + (dk * 9.0580006145e-06f + c) - hfsq + f + dk * 6.9313812256e-01f;
  r = x == __builtin_inff() ? x : r;
  r = x == -1.f ? -__builtin_inff() : r;
  r = x < -1.f ? __builtin_nanf("") : r;
  r = x == 0.f ? x : r;  // keeps -0
  return x != x ? x + x : r;
}

template <float (*F)(float)>
void vm_loop(float* d, const float* a, int64_t n) {
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) d[i] = F(a[i]);
}

// This ISA's copies as vmath.h's table (its field order).
inline VecMath vm_table() {
  return {vm_loop<vm_exp>, vm_loop<vm_log>,     vm_loop<vm_tanh>,
          vm_loop<vm_logistic>, vm_loop<vm_erf>, vm_loop<vm_log1p>};
}
