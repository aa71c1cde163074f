// oneDNN plumbing shared by the cpu executor's dot and convolution kernels: one CPU engine, a
// stream per thread, and primitives created with user-managed scratchpads (carved from the plan's
// arena, so executing a primitive never allocates and replicas can run it concurrently).
#pragma once
#include <dnnl.hpp>

#include <cstdlib>
#include <string_view>

namespace netspec::exec::cpu {

dnnl::engine& dnnl_engine();
dnnl::stream& dnnl_stream();  // per calling thread
// Primitive attributes with scratchpad_mode::user.
dnnl::primitive_attr dnnl_user_scratchpad_attr();

// Does oneDNN's effective ISA (the CPU found, capped by ONEDNN_MAX_CPU_ISA) include `want`? Its
// cpu_isa values are feature bit masks. Every run-time ISA choice of the executor asks this.
inline bool onednn_has_isa(dnnl::cpu_isa want) {
  const unsigned isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const unsigned w = static_cast<unsigned>(want);
  return (isa & w) == w;
}

// Whether one of netspec's own AVX-512 kernels runs: `built` (its file compiled with AVX-512),
// oneDNN's effective ISA has avx512_core (ONEDNN_MAX_CPU_ISA=AVX2 caps netspec's choices as it
// caps oneDNN's), and its A/B switch, the environment variable `knob`, is not "0".
inline bool own_avx512_kernels(const char* knob, bool built) {
  const char* e = std::getenv(knob);
  if (e && std::string_view(e) == "0") return false;
  return built && onednn_has_isa(dnnl::cpu_isa::avx512_core);
}

}  // namespace netspec::exec::cpu
