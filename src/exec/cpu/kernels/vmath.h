// Vectorised f32 exp, log, log1p, tanh, logistic and erf over arrays, for the cpu executor's elementwise
// and fused kernels. The code is compiled for AVX-512 and for AVX2+FMA (vmath_avx512.cpp,
// vmath_avx2.cpp) and the variant is chosen once, at first use, by the CPU found at run time;
// other CPUs (and NETSPEC_SCALAR_MATH=1) use the scalar functions of exec/scalar_ops.h. Each
// vector result is within 2 ulp of the scalar one (tests/exec/cpu_vmath_test.cpp sweeps it).
#pragma once
#include <cstdint>

#include "hlo/ir.h"

namespace netspec::exec::cpu {

// d[i] = f(a[i]) for i < n; d may equal a (in place), otherwise they must not overlap.
using VecUnaryFn = void (*)(float* d, const float* a, int64_t n);

// The vector kernel for kExponential, kLog, kLogPlusOne, kTanh, kLogistic or kErf; nullptr for
// other kinds.
VecUnaryFn vec_unary(hlo::OpKind k);
// "avx512", "avx2" or "scalar": the variant vec_unary returns kernels of.
const char* vec_math_isa();

// The variants themselves (nullptr where this build has none), for tests and benchmarks.
struct VecMath {
  VecUnaryFn exp = nullptr, log = nullptr, tanh = nullptr, logistic = nullptr, erf = nullptr,
             log1p = nullptr;
};
VecMath vec_math_avx512();
VecMath vec_math_avx2();

}  // namespace netspec::exec::cpu
