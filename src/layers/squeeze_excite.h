// Helpers shared by the mobile block kinds (invertedResidual, mbConv, mbConvV3, fusedMbConv, uib):
// torchvision's SqueezeExcitation and the residual add when stride 1 keeps the width.
#pragma once
#include "layers/lower.h"

namespace netspec::layers {

// The SE gate after fc2: sigmoid (EfficientNet) or hard-sigmoid relu6(x + 3) / 6 (MobileNetV3).
enum class SeGate { sigmoid, hardSigmoid };

// torchvision SqueezeExcitation on x [B, C, H, W]: s = mean_hw(x); s = act(fc1(s)) (1x1 conv +
// bias, C -> squeeze); s = gate(fc2(s)) (squeeze -> C); y = x · s. Params fc1.w, fc1.b, fc2.w,
// fc2.b (squeeze width comes from fc1's weight shape).
Value* squeeze_excite(LowerCtx& c, Value* x, Activation act, SeGate gate);

// y + x when stride == 1 and the width is kept (the inverted-residual skip), else y.
Value* skip_add(LowerCtx& c, Value* x, Value* y, int64_t stride);

}  // namespace netspec::layers
