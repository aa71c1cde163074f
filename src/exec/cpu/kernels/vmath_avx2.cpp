// vmath.h's kernels compiled for AVX2 + FMA without AVX-512 (this file's flags: CMakeLists.txt),
// the variant for CPUs without AVX-512 (AMD EPYC of kind B).
#include "exec/cpu/kernels/vmath.h"
#include "exec/erf_f32.h"

namespace netspec::exec::cpu {
namespace {
#include "exec/cpu/kernels/vmath_impl.h"
}  // namespace

VecMath vec_math_avx2() {
#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
  return vm_table();
#else
  return {};
#endif
}

}  // namespace netspec::exec::cpu
