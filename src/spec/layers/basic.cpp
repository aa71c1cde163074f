// Basic layers: conv2d, convBn, batchNorm, maxPool, globalAvgPool, flatten, layerNorm, dense,
// bilinearUpsample, spatialFlatten, spatialUnflatten. Names follow a PyTorch nn.Sequential:
// "layers.<i>.weight" for single-tensor layers, "layers.<i>.conv/bn" for convBn.
#include "spec/layers/account.h"

namespace netspec::acct {

void account(const Conv2d& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  c.positive("k", l.k);
  c.positive("stride", l.stride);
  Fm y = c.conv("", c.image(l.ic), l.oc, l.k, l.stride, 1, true, l.pad);
  c.out = y.shape();
}

// conv (no bias) + BN + net.convBnAct (torchvision Conv2dNormActivation).
void account(const ConvBn& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  c.positive("k", l.k);
  c.positive("stride", l.stride);
  Fm y = c.conv("conv", c.image(l.ic), l.oc, l.k, l.stride, 1, false, l.pad);
  c.bn("bn", l.oc);
  c.out = y.shape();
}

// BatchNorm2d over an image's channels (or BatchNorm1d over a vector) + act.
void account(const BatchNorm& l, Ctx& c) {
  c.positive("ch", l.ch);
  if (c.in.size() == 1)
    c.vec(l.ch);
  else
    c.image(l.ch);
  c.bn("", l.ch);
  c.out = c.in;
}

void account(const MaxPool& l, Ctx& c) {
  c.positive("size", l.size);
  c.positive("stride", l.stride);
  Fm x = c.image(-1);
  if (l.ceilMode && l.pad != Padding::valid)
    c.fail("ceilMode needs pad \"valid\" (PyTorch's ceil_mode with padding 0)");
  Fm y{x.c, pool_out(x.h, l.size, l.stride, l.pad, l.ceilMode),
       pool_out(x.w, l.size, l.stride, l.pad, l.ceilMode)};
  if (y.h <= 0 || y.w <= 0)
    c.fail("spatial size goes to zero ({}x{} with window {} stride {})", x.h, x.w, l.size,
           l.stride);
  c.out = y.shape();
}

// Mean over H, W; keeps [C, 1, 1] like PyTorch's AdaptiveAvgPool2d(1) (flatten follows).
void account(const GlobalAvgPool&, Ctx& c) {
  Fm x = c.image(-1);
  c.out = {x.c, 1, 1};
}

void account(const Flatten&, Ctx& c) { c.out = {num_elements(c.in)}; }

// LayerNorm over the feature dim: the last dim of [D] / [T, D], the channel dim of [C, H, W]
// (per position, like torchvision's LayerNorm2d).
void account(const LayerNorm& l, Ctx& c) {
  c.positive("dim", l.dim);
  int64_t d = c.in.size() == 3 ? c.in[0] : c.in.back();
  c.channels_match("normalized dim", d, l.dim);
  c.ln("", l.dim);
  c.out = c.in;
}

// y = act(x Wᵀ + b) on a vector [in] or per token of [T, in].
void account(const Dense& l, Ctx& c) {
  c.positive("in", l.in);
  c.positive("out", l.out);
  int64_t rows = 1;
  if (c.in.size() == 2)
    rows = c.tokens(l.in);
  else
    c.vec(l.in);
  c.linear("", l.in, l.out, true, rows);
  c.out = c.in.size() == 2 ? Shape{rows, l.out} : Shape{l.out};
}

void account(const BilinearUpsample& l, Ctx& c) {
  c.positive("scale", l.scale);
  Fm x = c.image(-1);
  c.out = {x.c, x.h * l.scale, x.w * l.scale};
}

// [C, H, W] -> [H*W, C] tokens (row-major positions).
void account(const SpatialFlatten&, Ctx& c) {
  Fm x = c.image(-1);
  c.out = {x.h * x.w, x.c};
}

void account(const SpatialUnflatten& l, Ctx& c) {
  c.positive("ch", l.ch);
  c.positive("h", l.h);
  c.positive("w", l.w);
  int64_t t = c.tokens(l.ch);
  c.channels_match("token count h*w", t, int64_t{l.h} * l.w);
  c.out = {l.ch, l.h, l.w};
}

}  // namespace netspec::acct
