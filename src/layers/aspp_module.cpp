// asppModule: torchvision DeepLabV3 ASPP(ic, [12, 24, 36], oc), names as its state_dict:
//   convs.0: 1x1 conv + BN + ReLU;  convs.1-3: 3x3 conv dilation r (padding r) + BN + ReLU;
//   convs.4: global average pool, 1x1 conv + BN + ReLU, broadcast back over H, W (torchvision's
//            bilinear resize of a 1x1 map is exactly that);
//   project: concat (5·oc) -> 1x1 conv + BN + ReLU. torchvision's Dropout(0.5) after project is
//   not applied (identity in eval; the train step has no dropout there).
#include "layers/lower.h"

namespace netspec::layers {
namespace {

// 3x3 conv with dilation r and padding r (same size), no bias, + BN + ReLU: torchvision ASPPConv.
Value* atrous(LowerCtx& c, const std::string& name, Value* x, int64_t oc, int64_t r) {
  const int64_t ic = x->type.dim(1);
  Value* w = c.param(name + ".0.weight", {oc, ic, 3, 3}, ParamInit::convWeight, true);
  hlo::ConvOptions o;
  o.dims = hlo::ConvOptions::nchw(2);
  o.padding = {{r, r}, {r, r}};
  o.rhs_dilation = {r, r};
  Value* y = c.b.convolution(x, w, o);
  return activation(c.b, batch_norm(c, y, c.bn(name + ".1", oc)), Activation::relu);
}

}  // namespace

Value* lower_aspp_module(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<AsppModule>(layer);
  Fm f = c.image(l.ic);
  hlo::Builder& b = c.b;
  std::vector<Value*> branches{conv_bn_act(c, "convs.0", x, {l.oc, 1}, Activation::relu, "0", "1")};
  int i = 1;
  for (int64_t rate : {12, 24, 36})
    branches.push_back(atrous(c, fmt::format("convs.{}", i++), x, l.oc, rate));
  const int64_t n = x->type.dim(0);
  Value* pooled =
      conv_bn_act(c, "convs.4", global_avg_pool(b, x), {l.oc, 1}, Activation::relu, "1", "2");
  branches.push_back(b.broadcast_in_dim(b.reshape(pooled, {n, l.oc}), {n, l.oc, f.h, f.w}, {0, 1}));
  return conv_bn_act(c, "project", b.concatenate(branches, 1), {l.oc, 1}, Activation::relu, "0",
                     "1");
}

NETSPEC_REGISTER_LAYER(asppModule, lower_aspp_module)

}  // namespace netspec::layers
