// oneDNN plumbing shared by the cpu executor's dot and convolution kernels: one CPU engine, a
// stream per thread, and primitives created with user-managed scratchpads (carved from the plan's
// arena, so executing a primitive never allocates and replicas can run it concurrently).
#pragma once
#include <dnnl.hpp>

namespace netspec::exec::cpu {

dnnl::engine& dnnl_engine();
dnnl::stream& dnnl_stream();  // per calling thread
// Primitive attributes with scratchpad_mode::user.
dnnl::primitive_attr dnnl_user_scratchpad_attr();

}  // namespace netspec::exec::cpu
