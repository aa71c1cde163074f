// vmath.h's kernels compiled for AVX-512 (this file's flags: CMakeLists.txt); only called on a
// CPU that has AVX-512 F/DQ/BW/VL.
#include "exec/cpu/kernels/vmath.h"
#include "exec/erf_f32.h"

namespace netspec::exec::cpu {
namespace {
#include "exec/cpu/kernels/vmath_impl.h"
}  // namespace

VecMath vec_math_avx512() {
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  return vm_table();
#else
  return {};
#endif
}

}  // namespace netspec::exec::cpu
