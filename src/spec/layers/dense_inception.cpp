// Multi-branch CNN blocks: denseBlock / transitionLayer (torchvision DenseNet, bn_size 4),
// inceptionModule (torchvision GoogLeNet Inception, BasicConv2d = conv + BN(eps 1e-3) + ReLU)
// and asppModule (torchvision DeepLabV3 ASPP, rates 12/24/36 + image pooling branch).
#include "spec/layers/account.h"

namespace netspec::acct {

// Layer i: BN -> ReLU -> 1x1 (in_i -> 4·growth) -> BN -> ReLU -> 3x3 (-> growth), concat.
void account(const DenseBlock& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("growth", l.growth);
  c.positive("nLayers", l.nLayers);
  Fm x = c.image(l.ic);
  int64_t g = l.growth;
  for (int i = 0; i < l.nLayers; ++i) {
    Scope s(c, fmt::format("denselayer{}", i + 1));
    Fm in{x.c + i * g, x.h, x.w};
    c.bn("norm1", in.c);
    Fm y = c.conv("conv1", in, 4 * g, 1);
    c.bn("norm2", 4 * g);
    c.conv("conv2", y, g, 3);
  }
  c.out = {x.c + l.nLayers * g, x.h, x.w};
}

// BN -> ReLU -> 1x1 conv (no bias) -> 2x2 average pool stride 2.
void account(const TransitionLayer& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  Fm x = c.image(l.ic);
  c.check(x.h >= 2 && x.w >= 2, "feature map too small to pool (got {}x{})", x.h, x.w);
  c.bn("norm", l.ic);
  c.conv("conv", x, l.oc, 1);
  c.out = {l.oc, x.h / 2, x.w / 2};
}

// Branches: 1x1; 1x1 -> 3x3; 1x1 -> 3x3 (torchvision keeps 3x3 where the paper has 5x5);
// maxpool 3x3/1 -> 1x1. Output channels b1 + b2 + b3 + b4.
void account(const InceptionModule& l, Ctx& c) {
  for (auto [n, v] : {std::pair{"ic", l.ic}, {"b1", l.b1}, {"b2reduce", l.b2reduce}, {"b2", l.b2},
                      {"b3reduce", l.b3reduce}, {"b3", l.b3}, {"b4", l.b4}})
    c.positive(n, v);
  Fm x = c.image(l.ic);
  c.conv_bn("branch1", x, l.b1, 1);
  c.conv_bn("branch2.1", c.conv_bn("branch2.0", x, l.b2reduce, 1), l.b2, 3);
  c.conv_bn("branch3.1", c.conv_bn("branch3.0", x, l.b3reduce, 1), l.b3, 3);
  c.conv_bn("branch4.1", x, l.b4, 1);
  c.out = {l.b1 + l.b2 + l.b3 + l.b4, x.h, x.w};
}

void account(const AsppModule& l, Ctx& c) {
  c.positive("ic", l.ic);
  c.positive("oc", l.oc);
  Fm x = c.image(l.ic);
  c.conv_bn("convs.0", x, l.oc, 1);
  int i = 1;
  for (int64_t rate : {12, 24, 36}) c.conv_bn(fmt::format("convs.{}", i++), x, l.oc, 3, 1, 1, rate);
  c.conv_bn("convs.4", Fm{x.c, 1, 1}, l.oc, 1);  // on the globally pooled map
  c.conv_bn("project", Fm{5 * int64_t{l.oc}, x.h, x.w}, l.oc, 1);
  c.out = {l.oc, x.h, x.w};
}

}  // namespace netspec::acct
