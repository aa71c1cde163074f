// Dense-prediction blocks: unetDown / unetUp (U-Net, milesial layout: maxpool + DoubleConv,
// transposed-conv up + skip concat + DoubleConv), fpnModule (torchvision
// FeaturePyramidNetwork), fpnDetect (multi-scale anchor head), timeCondAdd (DDPM time embedding).
#include "spec/layers/account.h"

namespace netspec::acct {
namespace {
// DoubleConv: (3x3 conv, no bias, BN, ReLU) x 2.
Fm double_conv(Ctx& c, Fm x, int64_t oc) {
  return c.conv_bn("conv2", c.conv_bn("conv1", x, oc, 3), oc, 3);
}
}  // namespace

// Saves its input as the next skip, 2x2 max pool, DoubleConv ic -> oc.
void account(const UnetDown& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  Fm x = c.image(l.ic);
  c.check(x.h % 2 == 0 && x.w % 2 == 0, "needs an even feature map to pool (got {}x{})", x.h, x.w);
  c.skips.push_back(c.in);
  c.out = double_conv(c, Fm{x.c, x.h / 2, x.w / 2}, l.oc).shape();
}

// ConvTranspose2d(ic, ic/2, 2, stride 2) (weight [in, out, 2, 2] + bias), concat with the
// latest skip (must be [ic/2, 2H, 2W]), DoubleConv ic -> oc.
void account(const UnetUp& l, Ctx& c) {
  c.positive("ic", l.ic, 2);
  c.positive("oc", l.oc);
  c.check(l.ic % 2 == 0, "ic must be even (got {})", l.ic);
  Fm x = c.image(l.ic);
  if (c.skips.empty()) c.fail("no skip connection left (every unetUp needs an earlier unetDown)");
  Shape skip = c.skips.back();
  c.skips.pop_back();
  Shape want{l.ic / 2, 2 * x.h, 2 * x.w};
  if (skip != want)
    c.fail("skip shape (got [{}], expected [{}])", fmt::join(skip, ", "), fmt::join(want, ", "));
  c.param("up.weight", {l.ic, l.ic / 2, 2, 2}, ParamInit::convWeight, true);
  c.param("up.bias", {l.ic / 2}, ParamInit::zeros, false);
  c.add_flops(2 * x.h * x.w * l.ic * (l.ic / 2) * 4);
  c.out = double_conv(c, Fm{l.ic, 2 * x.h, 2 * x.w}, l.oc).shape();
}

// Input is C5; C4, C3 (and C2 when c2 > 0) are the latest earlier outputs with those channels
// at 2x, 4x (8x) the resolution. inner_blocks.i: 1x1 ci -> target, layer_blocks.i: 3x3, both
// with bias (i from the finest level). Output: the finest pyramid level [target, H, W].
void account(const FpnModule& l, Ctx& c) {
  c.positive("c2", l.c2, 0);
  c.positive("c3", l.c3);
  c.positive("c4", l.c4);
  c.positive("c5", l.c5);
  c.positive("target", l.target);
  Fm c5 = c.image(l.c5);
  std::vector<Fm> levels;
  if (l.c2 > 0) levels.push_back(c.tap("C2", l.c2, 8 * c5.h, 8 * c5.w));
  levels.push_back(c.tap("C3", l.c3, 4 * c5.h, 4 * c5.w));
  levels.push_back(c.tap("C4", l.c4, 2 * c5.h, 2 * c5.w));
  levels.push_back(c5);
  for (size_t i = 0; i < levels.size(); ++i)
    c.conv(fmt::format("inner_blocks.{}", i), levels[i], l.target, 1, 1, 1, true);
  for (size_t i = 0; i < levels.size(); ++i)
    c.conv(fmt::format("layer_blocks.{}", i), Fm{l.target, levels[i].h, levels[i].w}, l.target,
           3, 1, 1, true);
  c.out = {l.target, levels[0].h, levels[0].w};
}

// Taps C3 (4x) and C4 (2x) like fpnModule; lateral 1x1 ci -> g5 and 3x3 smoothing (bias) per
// level; a head shared across levels: towerDepth x (3x3 conv + BN + act) and a 1x1 prediction
// conv g5 -> anchors·oc. Output: every anchor of every level, [Σ Hi·Wi·anchors, oc].
void account(const FpnDetect& l, Ctx& c) {
  c.positive("oc", l.oc);
  c.positive("c3", l.c3);
  c.positive("c4", l.c4);
  c.positive("c5", l.c5);
  c.positive("g5", l.g5);
  c.positive("anchors", l.anchors);
  c.positive("towerDepth", l.towerDepth, 0);
  Fm c5 = c.image(l.c5);
  if (c.net.detStride > 0 && c.net.inputHeight > 0)
    c.channels_match("detStride (input height / C5 height)", c.net.inputHeight / c5.h,
                     c.net.detStride);
  std::vector<Fm> levels{c.tap("C3", l.c3, 4 * c5.h, 4 * c5.w),
                         c.tap("C4", l.c4, 2 * c5.h, 2 * c5.w), c5};
  int64_t cells = 0;
  for (size_t i = 0; i < levels.size(); ++i) {
    c.conv(fmt::format("lateral.{}", i), levels[i], l.g5, 1, 1, 1, true);
    c.conv(fmt::format("smooth.{}", i), Fm{l.g5, levels[i].h, levels[i].w}, l.g5, 3, 1, 1, true);
    cells += levels[i].h * levels[i].w;
  }
  // Shared head: params once, FLOPs for every level.
  Fm f{l.g5, levels[0].h, levels[0].w};
  for (int d = 0; d < l.towerDepth; ++d) c.conv_bn(fmt::format("tower.{}", d), f, l.g5, 3);
  c.conv("pred", f, int64_t{l.anchors} * l.oc, 1, 1, 1, true);
  int64_t per_cell = 2 * l.g5 * (int64_t{l.towerDepth} * l.g5 * 9 + int64_t{l.anchors} * l.oc);
  c.add_flops(per_cell * (cells - levels[0].h * levels[0].w));
  c.out = {cells * l.anchors, l.oc};
}

// Sinusoidal embedding of the diffusion timestep (nFreq sin + nFreq cos), Linear -> ch,
// broadcast-added over H, W. The timestep is a second model input.
void account(const TimeCondAdd& l, Ctx& c) {
  c.positive("ch", l.ch);
  c.positive("nFreq", l.nFreq);
  c.image(l.ch);
  c.linear("time_proj", 2 * int64_t{l.nFreq}, l.ch, true);
  c.out = c.in;
}

}  // namespace netspec::acct
