// Helpers shared by the modern-ConvNet kinds (fireModule, shuffleBlock, shuffleV2Block,
// denseBlock, transitionLayer, inceptionModule, darknetBlock, cspBlock, convNext*): channel
// shuffle, average / max pooling windows, conv + bias + activation, per-channel BN + act and
// channel concat. Each kind's file holds its forward; these are the pieces they share.
#pragma once
#include <utility>

#include "layers/lower.h"

namespace netspec::layers {

using Pad2 = std::pair<int64_t, int64_t>;

// ShuffleNet channel shuffle of [B, C, H, W] with g groups: view as [B, g, C/g, H, W], swap
// dims 1 and 2, view back (torchvision channel_shuffle). Output channel i·g + j = input j·C/g + i.
Value* channel_shuffle(hlo::Builder& b, Value* x, int64_t groups);
// k x k window, stride s, explicit (low, high) padding per spatial dim. avg_pool divides every
// window sum by k² (nn.AvgPool2d's default count_include_pad = True); max_pool pads with -inf.
Value* avg_pool(hlo::Builder& b, Value* x, int64_t k, int64_t s, Pad2 ph, Pad2 pw);
Value* max_pool(hlo::Builder& b, Value* x, int64_t k, int64_t s, Pad2 ph, Pad2 pw);
// BN "<name>" then activation: the pre-activation unit of DenseNet.
Value* bn_act(LowerCtx& c, const std::string& name, Value* x, Activation a);
// Concatenation along channels (dim 1).
Value* concat_channels(hlo::Builder& b, const std::vector<Value*>& xs);
// Channels [lo, hi) of [B, C, H, W].
Value* slice_channels(hlo::Builder& b, Value* x, int64_t lo, int64_t hi);

}  // namespace netspec::layers
