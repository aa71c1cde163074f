// Mobile families: separableConv (MobileNetV1), invertedResidual (torchvision MobileNetV2),
// mbConv / fusedMbConv (torchvision EfficientNet / EfficientNetV2), mbConvV3 (torchvision
// MobileNetV3), uib (timm MobileNetV4 UniversalInvertedResidual), fireModule (SqueezeNet),
// shuffleBlock (ShuffleNet v1) and shuffleV2Block (torchvision ShuffleNetV2).
#include "spec/layers/account.h"

namespace netspec::acct {

// depthwise 3x3 (stride) + BN + act, pointwise 1x1 + BN + act.
void account(const SeparableConv& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  c.positive("stride", l.stride);
  Fm x = c.image(l.ic);
  x = c.conv_bn("dw", x, l.ic, 3, l.stride, l.ic);
  x = c.conv_bn("pw", x, l.oc, 1);
  c.out = x.shape();
}

// expand 1x1 (if expand != 1) + dw 3x3 + linear project 1x1, ReLU6, residual when
// stride == 1 and ic == oc. hidden = round(ic * expand) as in torchvision.
void account(const InvertedResidual& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  c.positive("expand", l.expand);
  c.positive("nBlocks", l.nBlocks);
  c.check(l.stride == 1 || l.stride == 2, "stride must be 1 or 2 (got {})", l.stride);
  Fm x = c.image(l.ic);
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("block{}", b));
    int64_t hidden = x.c * l.expand;
    Fm y = x;
    if (l.expand != 1) y = c.conv_bn("expand", y, hidden, 1);
    y = c.conv_bn("dw", y, hidden, 3, b == 0 ? l.stride : 1, hidden);
    x = c.conv_bn("project", y, l.oc, 1);
  }
  c.out = x.shape();
}

// torchvision MBConv: expanded = make_divisible(ic * expand, 8); SE squeeze = max(1, ic / 4)
// of the BLOCK INPUT channels; SiLU (act); residual when stride == 1 and ic == oc.
void account(const MbConv& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  c.positive("expand", l.expand);
  c.positive("k", l.k);
  c.positive("nBlocks", l.nBlocks);
  c.check(l.k % 2 == 1, "kernel must be odd (got {})", l.k);
  c.check(l.stride == 1 || l.stride == 2, "stride must be 1 or 2 (got {})", l.stride);
  Fm x = c.image(l.ic);
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("block{}", b));
    int64_t e = make_divisible(static_cast<double>(x.c) * l.expand);
    Fm y = x;
    if (e != x.c) y = c.conv_bn("expand", y, e, 1);
    y = c.conv_bn("dw", y, e, l.k, b == 0 ? l.stride : 1, e);
    if (l.useSE) squeeze_excite(c, "se", y, std::max<int64_t>(1, x.c / 4));
    x = c.conv_bn("project", y, l.oc, 1);
  }
  c.out = x.shape();
}

// torchvision MobileNetV3 InvertedResidual: explicit expanded width; SE squeeze =
// make_divisible(expandCh / 4, 8) with hard-sigmoid gate.
void account(const MbConvV3& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  c.positive("expandCh", l.expandCh);
  c.positive("k", l.k);
  c.check(l.k % 2 == 1, "kernel must be odd (got {})", l.k);
  c.check(l.stride == 1 || l.stride == 2, "stride must be 1 or 2 (got {})", l.stride);
  Fm y = c.image(l.ic);
  if (l.expandCh != l.ic) y = c.conv_bn("expand", y, l.expandCh, 1);
  y = c.conv_bn("dw", y, l.expandCh, l.k, l.stride, l.expandCh);
  if (l.useSE) squeeze_excite(c, "se", y, make_divisible(l.expandCh / 4));
  y = c.conv_bn("project", y, l.oc, 1);
  c.out = y.shape();
}

// torchvision FusedMBConv: fused kxk expand (stride) + 1x1 project; with expand == 1 a single
// kxk conv ic -> oc + BN + SiLU. useSE adds an SE (squeeze max(1, ic / 4)) as timm allows.
void account(const FusedMbConv& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  c.positive("expand", l.expand);
  c.positive("k", l.k);
  c.positive("nBlocks", l.nBlocks);
  c.check(l.stride == 1 || l.stride == 2, "stride must be 1 or 2 (got {})", l.stride);
  Fm x = c.image(l.ic);
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("block{}", b));
    int64_t stride = b == 0 ? l.stride : 1;
    int64_t e = make_divisible(static_cast<double>(x.c) * l.expand);
    if (e != x.c) {
      Fm y = c.conv_bn("expand", x, e, l.k, stride);
      if (l.useSE) squeeze_excite(c, "se", y, std::max<int64_t>(1, x.c / 4));
      x = c.conv_bn("project", y, l.oc, 1);
    } else {
      x = c.conv_bn("fused", x, l.oc, l.k, stride);
    }
  }
  c.out = x.shape();
}

// timm UniversalInvertedResidual (MobileNetV4): [dw_start preDWk, BN] -> pw_exp 1x1 + BN + act
// -> [dw_mid postDWk + BN + act] -> pw_proj 1x1 + BN. The stride goes on dw_mid if present,
// else on dw_start. mid = make_divisible(ic * expand). No layer scale (conv variants).
void account(const Uib& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  c.positive("expand", l.expand);
  c.positive("preDWk", l.preDWk, 0);
  c.positive("postDWk", l.postDWk, 0);
  c.check(l.stride == 1 || l.stride == 2, "stride must be 1 or 2 (got {})", l.stride);
  c.check(l.stride == 1 || l.preDWk > 0 || l.postDWk > 0,
          "a strided uib needs a depthwise conv (got preDWk 0, postDWk 0)");
  Fm x = c.image(l.ic);
  if (l.preDWk > 0) x = c.conv_bn("dw_start", x, l.ic, l.preDWk, l.postDWk > 0 ? 1 : l.stride, l.ic);
  int64_t mid = make_divisible(static_cast<double>(l.ic) * l.expand);
  x = c.conv_bn("pw_exp", x, mid, 1);
  if (l.postDWk > 0) x = c.conv_bn("dw_mid", x, mid, l.postDWk, l.stride, mid);
  x = c.conv_bn("pw_proj", x, l.oc, 1);
  c.out = x.shape();
}

// SqueezeNet Fire: squeeze 1x1 + ReLU, then concat(expand1x1, expand3x3) + ReLU; biases.
void account(const FireModule& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("squeeze", l.squeeze);
  c.positive("e1x1", l.e1x1);
  c.positive("e3x3", l.e3x3);
  Fm s = c.conv("squeeze", c.image(l.ic), l.squeeze, 1, 1, 1, true);
  Fm a = c.conv("expand1x1", s, l.e1x1, 1, 1, 1, true);
  c.conv("expand3x3", s, l.e3x3, 3, 1, 1, true);
  c.out = {l.e1x1 + l.e3x3, a.h, a.w};
}

// ShuffleNet v1: unit 0 has stride 2 and concatenates avgpool(x) (so its branch gives oc - ic
// channels), later units add. Branch: group 1x1 -> shuffle -> dw 3x3 -> group 1x1, BN each;
// bottleneck width oc / 4.
void account(const ShuffleBlock& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  c.positive("groups", l.groups);
  c.positive("nUnits", l.nUnits);
  c.check(l.oc > l.ic, "oc must exceed ic (unit 0 concatenates the input) (got {} <= {})", l.oc,
          l.ic);
  int64_t mid = l.oc / 4;
  c.check(mid % l.groups == 0 && l.ic % l.groups == 0 && (l.oc - l.ic) % l.groups == 0,
          "groups {} must divide ic {}, oc/4 {} and oc-ic {}", l.groups, l.ic, mid, l.oc - l.ic);
  Fm x = c.image(l.ic);
  for (int u = 0; u < l.nUnits; ++u) {
    Scope s(c, fmt::format("unit{}", u));
    int64_t branch_out = u == 0 ? l.oc - l.ic : l.oc;
    Fm y = c.conv_bn("gconv1", x, mid, 1, 1, l.groups);
    y = c.conv_bn("dw", y, mid, 3, u == 0 ? 2 : 1, mid);
    y = c.conv_bn("gconv2", y, branch_out, 1, 1, l.groups);
    x = {l.oc, y.h, y.w};
  }
  c.out = x.shape();
}

// torchvision ShuffleNetV2 stage: unit 0 (stride 2) has branch1 (dw 3x3 s2 + BN, 1x1 + BN +
// ReLU) and branch2 (1x1, dw 3x3 s2, 1x1, BN each); later units split channels in half and
// run branch2 on oc/2. Channel shuffle has no params.
void account(const ShuffleV2Block& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc, 2);
  c.positive("nUnits", l.nUnits);
  c.check(l.oc % 2 == 0, "oc must be even (got {})", l.oc);
  int64_t bf = l.oc / 2;
  Fm x = c.image(l.ic);
  for (int u = 0; u < l.nUnits; ++u) {
    Scope s(c, fmt::format("unit{}", u));
    Fm in2 = x;
    if (u == 0) {
      Fm b1 = c.conv_bn("branch1.dw", x, x.c, 3, 2, x.c);
      c.conv_bn("branch1.pw", b1, bf, 1);
    } else {
      in2 = {bf, x.h, x.w};
    }
    Fm y = c.conv_bn("branch2.pw1", in2, bf, 1);
    y = c.conv_bn("branch2.dw", y, bf, 3, u == 0 ? 2 : 1, bf);
    y = c.conv_bn("branch2.pw2", y, bf, 1);
    x = {l.oc, y.h, y.w};
  }
  c.out = x.shape();
}

}  // namespace netspec::acct
