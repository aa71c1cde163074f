// Run-time choice of vmath.h's variant: AVX-512 where the CPU has F/DQ/BW/VL, else AVX2 + FMA,
// else none (callers keep their scalar loops). NETSPEC_SCALAR_MATH=1 forces none. The choice
// also follows oneDNN's effective ISA, so ONEDNN_MAX_CPU_ISA=AVX2 caps netspec's own kernels
// with oneDNN's (one knob for "run as on an AVX2 CPU", as the layout choice does).
#include "exec/cpu/kernels/vmath.h"

#include <cstdlib>
#include <string_view>

#include "exec/cpu/dnnl_util.h"

namespace netspec::exec::cpu {
namespace {

struct Chosen {
  VecMath fns;
  const char* isa = "scalar";
};

Chosen choose() {
  const char* off = std::getenv("NETSPEC_SCALAR_MATH");
  if (off && *off && std::string_view(off) != "0") return {};
  __builtin_cpu_init();
  if (onednn_has_isa(dnnl::cpu_isa::avx512_core) && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    if (VecMath m = vec_math_avx512(); m.exp) return {m, "avx512"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    if (VecMath m = vec_math_avx2(); m.exp) return {m, "avx2"};
  return {};
}

const Chosen& chosen() {
  static const Chosen c = choose();
  return c;
}

}  // namespace

VecUnaryFn vec_unary(hlo::OpKind k) {
  const VecMath& m = chosen().fns;
  switch (k) {
    case hlo::OpKind::kExponential:
      return m.exp;
    case hlo::OpKind::kLog:
      return m.log;
    case hlo::OpKind::kTanh:
      return m.tanh;
    case hlo::OpKind::kLogistic:
      return m.logistic;
    case hlo::OpKind::kErf:
      return m.erf;
    case hlo::OpKind::kLogPlusOne:
      return m.log1p;
    default:
      return nullptr;
  }
}

const char* vec_math_isa() { return chosen().isa; }

}  // namespace netspec::exec::cpu
