// Helpers shared by the mobile block kinds (invertedResidual, mbConv, mbConvV3, fusedMbConv, uib):
// torchvision's SqueezeExcitation, the residual add when stride 1 keeps the width, the channel
// rounding and the stride check.
#pragma once
#include <algorithm>

#include "layers/block_helpers.h"

namespace netspec::layers {

// The SE gate after fc2: sigmoid (EfficientNet) or hard-sigmoid relu6(x + 3) / 6 (MobileNetV3).
enum class SeGate { sigmoid, hardSigmoid };

// torchvision SqueezeExcitation "<name>" on x [B, C, H, W]: s = mean_hw(x); s = act(fc1(s))
// (1x1 conv + bias, C -> squeeze); s = gate(fc2(s)) (squeeze -> C); y = x · s.
Value* squeeze_excite(LowerCtx& c, const std::string& name, Value* x, int64_t squeeze,
                      Activation act, SeGate gate);

// y + x when stride == 1 and the width is kept (the inverted-residual skip), else y.
Value* skip_add(LowerCtx& c, Value* x, Value* y, int64_t stride);

// skip_add after stochastic depth on the branch y of block i (EfficientNet); a block without the
// skip still counts in the drop-path ramp.
Value* drop_path_skip_add(LowerCtx& c, Value* x, Value* y, int block, int64_t stride);

// torchvision/timm _make_divisible: round to a multiple of `d`, never below 90 % of v.
inline int64_t make_divisible(double v, int64_t d = 8) {
  int64_t nv = std::max<int64_t>(d, static_cast<int64_t>(v + d / 2.0) / d * d);
  if (nv < 0.9 * v) nv += d;
  return nv;
}

// "stride must be 1 or 2 (got 3)".
inline void check_stride12(LowerCtx& c, int64_t stride) {
  c.check(stride == 1 || stride == 2, "stride must be 1 or 2 (got {})", stride);
}

// What the mobile blocks check first: an odd depthwise kernel k, the stride, an image input of
// ic channels.
inline void check_mobile_block(LowerCtx& c, int64_t ic, int64_t stride, int64_t k = 1) {
  c.check(k % 2 == 1, "kernel must be odd (got {})", k);
  check_stride12(c, stride);
  c.image(ic);
}

}  // namespace netspec::layers
