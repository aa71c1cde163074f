// Spec checks and accounting by hand: error texts (layer index, kind, got/expected), file
// errors with line:col, FLOPs of a conv and a dense layer, output shapes, parameter names.
#include <gtest/gtest.h>

#include "layers/param_table.h"
#include "spec/param_table.h"
#include "spec/spec_json.h"
#include "spec/summary.h"

namespace netspec {
namespace {

std::string error_of(const NetSpec& n) {
  try {
    build_param_table(n);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

std::string parse_error_of(const std::string& text) {
  try {
    parse_spec(text, "t.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Accounting, ConvFlopsAndParamsByHand) {
  // 3x3 conv 3->8 on 3x10x10, same: out 8x10x10; params 8*3*9 + 8 = 224;
  // FLOPs 2 * (10*10*8) * (3*9) = 43200.
  NetSpec n = NetBuilder("c").input(3, 10, 10).add(Conv2d{.ic = 3, .oc = 8, .k = 3}).build();
  ParamTable t = build_param_table(n);
  EXPECT_EQ(t.layers[0].out, (Shape{8, 10, 10}));
  EXPECT_EQ(t.total_params(), 224);
  EXPECT_EQ(t.total_flops(), 43200);
  ASSERT_EQ(t.params.size(), 2u);
  EXPECT_EQ(t.params[0].name, "layers.0.weight");
  EXPECT_EQ(t.params[0].shape, (Shape{8, 3, 3, 3}));
  EXPECT_TRUE(t.params[0].decay);
  EXPECT_EQ(t.params[1].name, "layers.0.bias");
  EXPECT_FALSE(t.params[1].decay);
  // Strided valid conv: (10 - 3) / 2 + 1 = 4.
  n.layers[0] = Conv2d{.ic = 3, .oc = 8, .k = 3, .stride = 2, .pad = Padding::valid};
  t = build_param_table(n);
  EXPECT_EQ(t.output, (Shape{8, 4, 4}));
  EXPECT_EQ(t.total_flops(), 2 * 16 * 8 * 27);
  // Strided same: ceil(10 / 3) = 4 for k 3 stride 3.
  n.layers[0] = Conv2d{.ic = 3, .oc = 8, .k = 3, .stride = 3};
  EXPECT_EQ(build_param_table(n).output, (Shape{8, 4, 4}));
}

TEST(Accounting, DenseFlopsAndMlpShapes) {
  NetSpec n = NetBuilder("mlp")
                  .input(1, 28, 28)
                  .add(Flatten{})
                  .add(Dense{.in = 784, .out = 512, .act = Activation::relu})
                  .add(Dense{.in = 512, .out = 10})
                  .build();
  ParamTable t = build_param_table(n);
  EXPECT_EQ(t.layers[0].out, (Shape{784}));
  EXPECT_EQ(t.layers[1].flops, 2 * 784 * 512);
  EXPECT_EQ(t.layers[2].flops, 2 * 512 * 10);
  EXPECT_EQ(t.total_params(), 784 * 512 + 512 + 512 * 10 + 10);
  EXPECT_EQ(t.params[2].name, "layers.2.weight");
  EXPECT_EQ(t.params[2].shape, (Shape{10, 512}));
  EXPECT_TRUE(t.bns.empty());
}

TEST(Accounting, ResidualBlockNamesShapesAndBn) {
  NetSpec n = NetBuilder("r")
                  .input(64, 56, 56)
                  .add(ResidualBlock{.ic = 64, .oc = 128, .nBlocks = 2, .firstStride = 2})
                  .build();
  ParamTable t = build_param_table(n);
  EXPECT_EQ(t.output, (Shape{128, 28, 28}));
  EXPECT_EQ(t.params[0].name, "layers.0.block0.conv1.weight");
  EXPECT_EQ(t.params[0].shape, (Shape{128, 64, 3, 3}));
  // block0: conv1, bn1, conv2, bn2, downsample conv + bn = 5 BNs in total with block1's 2.
  ASSERT_EQ(t.bns.size(), 5u);
  EXPECT_EQ(t.bns[2].name, "layers.0.block0.downsample.1");
  EXPECT_EQ(t.params[6].name, "layers.0.block0.downsample.0.weight");
  EXPECT_EQ(t.params[6].shape, (Shape{128, 64, 1, 1}));
  // 3x3 64->128 + 3x3 128->128 + 1x1 64->128 + 3 BN, then 2 x (3x3 128->128 + BN).
  int64_t p0 = 128 * 64 * 9 + 128 * 128 * 9 + 128 * 64 + 3 * 256;
  int64_t p1 = 2 * (128 * 128 * 9 + 256);
  EXPECT_EQ(t.total_params(), p0 + p1);
}

TEST(Accounting, SequenceModelShapes) {
  NetSpec n = NetBuilder("gpt")
                  .input(16)
                  .add(TokenPositionEmbed{.vocab = 50, .seqLen = 16, .dModel = 32})
                  .add(TransformerEncoder{.dim = 32,
                                          .heads = 4,
                                          .mlpDim = 64,
                                          .nBlocks = 1,
                                          .causalMask = true,
                                          .keepSequence = true})
                  .add(LmHead{.dModel = 32, .vocab = 50, .seqLen = 16})
                  .build();
  ParamTable t = build_param_table(n);
  EXPECT_EQ(t.layers[0].out, (Shape{16, 32}));
  EXPECT_EQ(t.output, (Shape{16, 50}));
  // block: 2 LN (128) + qkv 32*96+96 + proj 32*32+32 + fc1 32*64+64 + fc2 64*32+32; final LN 64.
  EXPECT_EQ(t.layers[1].params, 128 + 3168 + 1056 + 2112 + 2080 + 64);
  // Attention FLOPs: qkv 2*16*32*96, scores+mix 4*16*16*32, proj 2*16*32*32, mlp 2*2*16*32*64.
  EXPECT_EQ(t.layers[1].flops,
            2 * 16 * 32 * 96 + 4 * 16 * 16 * 32 + 2 * 16 * 32 * 32 + 2 * 2 * 16 * 32 * 64);
}

TEST(Checks, ChannelChain) {
  NetSpec n = NetBuilder("x")
                  .input(3, 32, 32)
                  .add(ConvBn{.ic = 3, .oc = 16, .k = 3})
                  .add(ResidualBlock{.ic = 32, .oc = 32, .nBlocks = 1})
                  .build();
  EXPECT_EQ(error_of(n), "[layer 1 residualBlock] input channels (got 16, expected 32)");
}

TEST(Checks, SpatialGoesToZeroAndPatchDivides) {
  NetSpec n = NetBuilder("x")
                  .input(3, 4, 4)
                  .add(MaxPool{.size = 5, .stride = 1, .pad = Padding::valid})
                  .build();
  EXPECT_EQ(error_of(n),
            "[layer 0 maxPool] spatial size goes to zero (4x4 with window 5 stride 1)");
  n = NetBuilder("v")
          .input(3, 30, 30)
          .add(PatchEmbed{.ic = 3, .dim = 8, .patch = 16, .nPatches = 4})
          .build();
  EXPECT_EQ(error_of(n),
            "[layer 0 patchEmbed] patch size does not divide the image (got 30x30, patch 16)");
  n = NetBuilder("v")
          .input(3, 32, 32)
          .add(PatchEmbed{.ic = 3, .dim = 8, .patch = 16, .nPatches = 5})
          .build();
  EXPECT_EQ(error_of(n), "[layer 0 patchEmbed] nPatches (got 5, expected 4)");
}

TEST(Checks, HeadsWindowsRangesAndShapes) {
  NetSpec n = NetBuilder("t")
                  .input(4)
                  .add(TokenPositionEmbed{.vocab = 9, .seqLen = 4, .dModel = 10})
                  .add(TransformerEncoder{.dim = 10, .heads = 3, .mlpDim = 8, .nBlocks = 1})
                  .build();
  EXPECT_EQ(error_of(n),
            "[layer 1 transformerEncoder] heads do not divide dim (got dim 10, heads 3)");
  n = NetBuilder("s")
          .input(8, 20, 20)
          .add(SwinStage{.dim = 8, .heads = 2, .mlpDim = 8, .window = 7})
          .build();
  EXPECT_EQ(error_of(n),
            "[layer 0 swinStage] window does not divide the feature map (got 20x20, window 7)");
  n = NetBuilder("d").input(3, 8, 8).add(ConvBn{.ic = 3, .oc = 0, .k = 3}).build();
  EXPECT_EQ(error_of(n), "[layer 0 convBn] oc must be >= 1 (got 0)");
  n = NetBuilder("f").input(3, 8, 8).add(Dense{.in = 192, .out = 10}).build();
  EXPECT_EQ(error_of(n), "[layer 0 dense] expects a vector [D] input (got [3, 8, 8])");
  n = NetBuilder("u").input(8, 8, 8).add(UnetUp{.ic = 8, .oc = 4}).build();
  EXPECT_EQ(error_of(n),
            "[layer 0 unetUp] no skip connection left (every unetUp needs an "
            "earlier unetDown)");
  n = NetBuilder("e").input(3, 32, 32).build();
  EXPECT_EQ(error_of(n), "[net e] has no layers");
}

TEST(Checks, FpnTapsNeedEarlierFeatures) {
  NetSpec n = NetBuilder("f")
                  .input(512, 8, 8)
                  .add(FpnModule{.c2 = 0, .c3 = 128, .c4 = 256, .c5 = 512, .target = 64})
                  .build();
  EXPECT_EQ(error_of(n), "[layer 0 fpnModule] no earlier output for C3 with 128 channels at 32x32");
}

TEST(Checks, SetNumClasses) {
  NetSpec n = NetBuilder("x").input(4).add(Dense{.in = 4, .out = 7}).build();
  set_num_classes(n, 3);
  EXPECT_EQ(num_classes(n), 3);
  NetSpec g = NetBuilder("g").input(4).add(PositionalEncoding{.inDim = 4}).build();
  EXPECT_THROW(set_num_classes(g, 3), Error);
}

TEST(SpecFile, UnknownFieldHasLineAndColumn) {
  std::string text =
      "{\n"
      "  \"name\": \"m\",\n"
      "  \"inputChannels\": 1, \"inputHeight\": 28, \"inputWidth\": 28,\n"
      "  \"layers\": [\n"
      "    {\"kind\": \"flatten\"},\n"
      "    {\"kind\": \"dense\", \"in\": 784, \"outt\": 10}\n"
      "  ]\n"
      "}\n";
  EXPECT_EQ(parse_error_of(text),
            "t.json:6:34: error: [layer 1 dense] unknown field 'outt' (expected one of in, out, "
            "act)");
}

TEST(SpecFile, UnknownKindMissingFieldBadEnumBadTypeSyntax) {
  std::string head = "{\"name\": \"m\", \"inputChannels\": 1,\n\"layers\": [\n";
  std::string e = parse_error_of(head + "  {\"kind\": \"conv3d\"}]}");
  EXPECT_EQ(e.substr(0, 70),
            "t.json:3:4: error: [layer 0] unknown layer kind 'conv3d' (expected one");
  EXPECT_EQ(parse_error_of(head + "  {\"kind\": \"dense\", \"in\": 4}]}"),
            "t.json:3:3: error: [layer 0 dense] missing required field 'out'");
  EXPECT_EQ(parse_error_of(head + "  {\"kind\": \"dense\", \"in\": 4, \"out\": 2, \"act\": "
                                  "\"tanh\"}]}"),
            "t.json:3:40: error: [layer 0 dense] unknown Activation 'tanh' for field 'act' "
            "(expected one of relu, relu6, identity, swish, hSwish, gelu, geluTanh)");
  EXPECT_EQ(parse_error_of(head + "  {\"kind\": \"dense\", \"in\": 4.5, \"out\": 2}]}"),
            "t.json:3:21: error: [layer 0 dense] field 'in' has the wrong type (got 4.5, "
            "expected an integer)");
  EXPECT_EQ(parse_error_of(head + "  {\"kind\": \"flatten\"},]}").substr(0, 33),
            "t.json:3:23: error: syntax error ");
  EXPECT_EQ(parse_error_of("{\"name\": \"m\", \"inputChannels\": 1, \"layers\": [], "
                           "\"train\": {\"lr\": 1}}"),
            "t.json:1:59: error: [train] unknown field 'lr' (expected one of dataset, "
            "learningRate, batchSize, epochs, seed, optimizer, momentum, nesterov, rmspropDecay, "
            "rmspropEps, weightDecay, wdExcludeNormBias, gradClipNorm, headLrMult, "
            "gradAccumSteps, schedule, warmupEpochs, expLRDecayRate, expLRDecayEpochs, "
            "labelSmoothing, lossKind, lossWeights, focalGamma, augment, randomResizedCrop, mixup, "
            "mixupAlpha, "
            "cutmix, cutmixAlpha, knnMixup, knnMixupAlpha, randomErasing, randomErasingProb, randAugment, "
            "randAugmentN, randAugmentM, randAugmentGeometric, randAugmentMstd, "
            "randAugmentIncreasing, autoAugment, repeatedAug, trainRes, testCropRatio, dropPath, "
            "dropout, useEMA, emaDecay, useSWA, swaStartEpoch, swaLr, useSWAG, swagK, swagSamples, "
            "useTTA, ttaSamples, runningBN, syncBN, bnMomentum, compensateBNMomentum, init, "
            "bf16, bf16Conv, evalEveryNEpochs, checkpointEveryNEpochs, monitor, monitorMode, "
            "saveTopK, keepSnapshots, earlyStopPatience, earlyStopMinDelta, plateauFactor, "
            "plateauPatience, plateauCooldown, plateauMinLr, plateauThreshold, bootstrapBackbone, bootstrapRanges, freeze, headPriorBias, "
            "detPriorPi, useDiouBox, anchors, fpnScales, fpnAffineScale, fpnAffineTranslate, "
            "fpnAffineProb, fpnAffineWhThrPx, fpnAffineAreaThr, yoloClsWeights, "
            "yoloClsFocalGamma, yoloObjFocalGamma, ddpm, ddpmSteps, betaStart, betaEnd, "
            "betaSchedule, nerfSamples, nerfNear, nerfFar, nerfBackground)");
}

TEST(SpecFile, BuilderRoundTripWithTrainConfig) {
  SpecFile s;
  s.net = NetBuilder("b")
              .input(3, 32, 32)
              .conv_bn_act(Activation::swish)
              .pad_style(PadStyle::symmetric)
              .build_tag("x1")
              .add(ConvBn{.ic = 3, .oc = 8, .k = 3, .stride = 2})
              .add(MbConv{.ic = 8, .oc = 8, .expand = 4, .k = 5, .useSE = false})
              .add(GlobalAvgPool{})
              .add(Flatten{})
              .add(Dense{.in = 8, .out = 10})
              .build();
  TrainConfig tc;
  tc.optimizer = OptimizerKind::sgd;
  tc.anchors = {1.5, 2.0};
  tc.lossKind = LossKind::perPixelFocalCE;
  s.train = tc;
  SpecFile back = parse_spec(dump_spec(s));
  EXPECT_EQ(back, s);
  EXPECT_EQ(dump_layer(s.net.layers[1]),
            "{\"kind\":\"mbConv\",\"ic\":8,\"oc\":8,\"expand\":4,\"k\":5,\"useSE\":false}");
}

TEST(TrainConfig, Validation) {
  TrainConfig c;
  EXPECT_NO_THROW(validate(c));
  c.bnMomentum = 0;
  try {
    validate(c);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "[train] bnMomentum must be in (0, 1] (got 0; PyTorch "
              "convention, weight of the new batch)");
  }
  c = TrainConfig{};
  c.lossKind = LossKind::perPixelWeightedCE;
  EXPECT_THROW(validate(c), Error);
}

TEST(Summary, TableHasTotals) {
  NetSpec n = NetBuilder("c").input(3, 10, 10).add(ConvBn{.ic = 3, .oc = 8, .k = 3}).build();
  std::string s = format_summary(n, build_param_table(n), 4);
  EXPECT_NE(s.find("4x8x10x10"), std::string::npos) << s;
  EXPECT_NE(s.find("total params 232 (3 tensors)  FLOPs 172,800"), std::string::npos) << s;
  EXPECT_NE(s.find("BN layers 1"), std::string::npos) << s;
  EXPECT_EQ(group_digits(-1234567), "-1,234,567");
}

// bnEps / lnEps divide: zero, negative or infinite ones are refused at their line:col (and by
// build_param_table for C++-built specs); an integer past int64 is named, not wrapped to -1.
TEST(SpecFile, EpsilonsMustBePositiveAndHugeIntegersAreNamed) {
  std::string e =
      parse_error_of("{\"name\": \"m\", \"inputChannels\": 1, \"bnEps\": -1,\n\"layers\": []}");
  EXPECT_NE(e.find("t.json:1:35: error: [net] bnEps must be a finite number > 0 (got -1)"),
            std::string::npos)
      << e;
  e = parse_error_of("{\"name\": \"m\", \"inputChannels\": 1, \"lnEps\": 0, \"layers\": []}");
  EXPECT_NE(e.find("[net] lnEps must be a finite number > 0 (got 0)"), std::string::npos) << e;
  e = parse_error_of(
      "{\"name\": \"m\", \"inputChannels\": 1, \"layers\": [{\"kind\": \"dense\", \"in\": 4, "
      "\"out\": 18446744073709551615}]}");
  EXPECT_NE(e.find("field 'out' has the wrong type (got 18446744073709551615, expected an "
                   "integer in 32-bit range)"),
            std::string::npos)
      << e;
  NetSpec n = NetBuilder("eps").input(4).add(Dense{4, 2}).build();
  n.bnEps = -1;
  try {
    build_param_table(n);
    ADD_FAILURE() << "bnEps -1 accepted";
  } catch (const Error& x) {
    EXPECT_NE(std::string(x.what()).find("bnEps must be a finite number > 0 (got -1)"),
              std::string::npos)
        << x.what();
  }
}

}  // namespace
}  // namespace netspec
