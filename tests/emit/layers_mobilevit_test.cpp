// mobileVitBlock: a tiny block (2 transformer blocks on 2x2 patches of a 4x4 map) passes gradcheck
// of its train-step loss in f64 on ref and cpu; the zoo nets emit every module and cpu train
// steps lower mobilevit-small's loss. The unfold/fold order and the values: equality with timm's
// mobilevit_s in reference_timm_test.cpp.
#include "emit_test_util.h"

namespace netspec::emit::testing {
namespace {

NetSpec tiny_mobilevit() {
  return NetBuilder("mobilevit_case")
      .input(3, 4, 4)
      .conv_bn_act(Activation::swish)
      .add(MobileVitBlock{.ic = 3, .dim = 4, .heads = 2, .mlpDim = 6, .nTxBlocks = 2})
      .add(GlobalAvgPool{})
      .add(Flatten{})
      .add(Dense{3, 3})
      .build();
}

TEST(EmitMobileVit, TinyBlockPassesGradcheckOnRefAndCpu) {
  EmitOptions o;
  o.batch = 2;
  o.loss.kind = LossKind::classCE;
  // the LayerNorm bias before conv_proj is a per-channel shift its BN (batch statistics) removes:
  // its exact gradient is 0
  expect_loss_grads(tiny_mobilevit(), o, "ref", 3, 0, 1e-9);
  expect_loss_grads(tiny_mobilevit(), o, "cpu", 3, 0, 1e-9);
}

TEST(EmitMobileVit, ZooNetsEmitEveryModuleAndTrain) {
  for (const char* name : {"mobilevit-small", "mobilevit-s"}) {
    SpecFile sf = resolve_net(name);
    NetSpec net = sf.net;
    net.inputHeight = net.inputWidth = 64;
    set_num_classes(net, 10);
    expect_emits_every_module(net, sf.train.value_or(TrainConfig{}), 2);
  }
  SpecFile sf = resolve_net("mobilevit-small");
  expect_train_steps_lower_loss(sf.net, sf.train.value_or(TrainConfig{}), 4);
}

}  // namespace
}  // namespace netspec::emit::testing
