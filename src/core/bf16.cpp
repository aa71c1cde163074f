// The array forms of core/bf16.h: branch-free bodies the compiler vectorises (SSE2 baseline).
#include "core/bf16.h"

namespace netspec {

void f32_to_bf16_n(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_bf16(x[i]);
}

void bf16_to_f32_n(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_f32(x[i]);
}

}  // namespace netspec
