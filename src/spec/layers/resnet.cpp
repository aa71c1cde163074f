// Residual families: residualBlock (torchvision BasicBlock), bottleneckBlock (torchvision
// Bottleneck, v1.5: the stride sits on the 3x3), darknetBlock (YOLOv3 residual), cspBlock
// (YOLOv5 C3). Parameter names follow torchvision: block<i>.conv1 / bn1 / downsample.0 / .1.
#include "spec/layers/account.h"

namespace netspec::acct {
namespace {

void check_blocks(Ctx& c, int ic, int oc, int n, int stride) {
  c.positive("ic", ic);
  c.positive("oc", oc);
  c.positive("nBlocks", n);
  c.positive("firstStride", stride);
}

// 1x1 conv + BN shortcut when the stride or the width changes.
Fm shortcut(Ctx& c, Fm x, int64_t oc, int64_t stride) {
  if (stride == 1 && x.c == oc) return x;
  Fm y = c.conv("downsample.0", x, oc, 1, stride);
  c.bn("downsample.1", oc);
  return y;
}

}  // namespace

// out = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)), 3x3 convs, stride on conv1.
void account(const ResidualBlock& l, Ctx& c) {
  check_blocks(c, l.ic, l.oc, l.nBlocks, l.firstStride);
  Fm x = c.image(l.ic);
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("block{}", b));
    int64_t stride = b == 0 ? l.firstStride : 1;
    Fm y = c.conv("conv1", x, l.oc, 3, stride);
    c.bn("bn1", l.oc);
    y = c.conv("conv2", y, l.oc, 3);
    c.bn("bn2", l.oc);
    shortcut(c, x, l.oc, stride);
    x = y;
  }
  c.out = x.shape();
}

// 1x1 (oc/4) -> 3x3 stride (oc/4) -> 1x1 (oc), expansion 4 as in torchvision.
void account(const BottleneckBlock& l, Ctx& c) {
  check_blocks(c, l.ic, l.oc, l.nBlocks, l.firstStride);
  c.check(l.oc % 4 == 0, "oc must be a multiple of 4 (expansion 4) (got {})", l.oc);
  int64_t width = l.oc / 4;
  Fm x = c.image(l.ic);
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("block{}", b));
    int64_t stride = b == 0 ? l.firstStride : 1;
    Fm y = c.conv("conv1", x, width, 1);
    c.bn("bn1", width);
    y = c.conv("conv2", y, width, 3, stride);
    c.bn("bn2", width);
    y = c.conv("conv3", y, l.oc, 1);
    c.bn("bn3", l.oc);
    shortcut(c, x, l.oc, stride);
    x = y;
  }
  c.out = x.shape();
}

// x + convBn3x3(ch/2 -> ch)(convBn1x1(ch -> ch/2)(x)), activation net.convBnAct.
void account(const DarknetBlock& l, Ctx& c) {
  c.positive("ch", l.ch, 2);
  c.positive("nBlocks", l.nBlocks);
  c.check(l.ch % 2 == 0, "ch must be even (got {})", l.ch);
  Fm x = c.image(l.ch);
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("block{}", b));
    Fm y = c.conv_bn("cv1", x, l.ch / 2, 1);
    c.conv_bn("cv2", y, l.ch, 3);
  }
  c.out = x.shape();
}

// C3: cv1, cv2 1x1 ic -> oc/2; m = nBlocks residual (1x1, 3x3) on cv1's branch;
// cv3 1x1 over concat(m, cv2) -> oc.
void account(const CspBlock& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc, 2);
  c.positive("nBlocks", l.nBlocks);
  c.check(l.oc % 2 == 0, "oc must be even (got {})", l.oc);
  int64_t h = l.oc / 2;
  Fm x = c.image(l.ic);
  Fm a = c.conv_bn("cv1", x, h, 1);
  c.conv_bn("cv2", x, h, 1);
  for (int b = 0; b < l.nBlocks; ++b) {
    Scope s(c, fmt::format("m{}", b));
    Fm y = c.conv_bn("cv1", a, h, 1);
    c.conv_bn("cv2", y, h, 3);
  }
  Fm y = c.conv_bn("cv3", Fm{2 * h, x.h, x.w}, l.oc, 1);
  c.out = y.shape();
}

}  // namespace netspec::acct
