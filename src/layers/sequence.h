// Helpers shared by the causal sequence kinds (waveNetBlock, mambaBlock) on x [B, T, C].
#pragma once
#include "layers/lower.h"

namespace netspec::layers {

// x delayed by d steps along T (dim 1): y[t] = x[t - d], `fill` for t < d (x [B, T, ...]).
Value* delay(hlo::Builder& b, Value* x, int64_t d, double fill = 0);

}  // namespace netspec::layers
