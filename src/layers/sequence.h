// Helpers shared by the causal sequence kinds (waveNetBlock, mambaBlock) on x [B, T, C].
#pragma once
#include "layers/lower.h"

namespace netspec::layers {

// x delayed by d steps along T (dim `axis`, 1 for [B, T, ...]): y[t] = x[t - d], `fill` for t < d.
Value* delay(hlo::Builder& b, Value* x, int64_t d, double fill = 0, size_t axis = 1);

}  // namespace netspec::layers
