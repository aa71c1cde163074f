// A train object in the seed's TrainConfig names (shared/seeds/001: TrainConfig) loads as the
// netspec fields it means, one note per converted field; what has no equivalent is refused.
#include "spec/seed_aliases.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "spec/spec_json.h"

namespace netspec {
namespace {

// A 64x32 (h x w) net with `train` as its train object.
std::string spec_with(const std::string& train) {
  return R"({"name": "m", "inputChannels": 3, "inputHeight": 64, "inputWidth": 32,
  "layers": [{"kind": "dense", "in": 6144, "out": 10}],
  "train": )" + train + "}";
}

struct Read {
  TrainConfig c;
  std::vector<std::string> notes;
};
Read read(const std::string& train) {
  Read r;
  SpecFile s = parse_spec(spec_with(train), "seed.json", &r.notes);
  EXPECT_TRUE(s.train.has_value());
  r.c = s.train.value_or(TrainConfig{});
  return r;
}
std::string error_of(const std::string& train) {
  try {
    std::vector<std::string> notes;
    parse_spec(spec_with(train), "seed.json", &notes);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}
bool has_note(const Read& r, const std::string& s) {
  for (const auto& n : r.notes)
    if (n == s) return true;
  ADD_FAILURE() << "no note '" << s << "' among " << testing::PrintToString(r.notes);
  return false;
}

TEST(SeedAliases, NetspecNamesLoadWithoutNotes) {
  Read r = read(R"({"optimizer": "sgd", "bnMomentum": 0.1, "anchors": [10, 20]})");
  EXPECT_TRUE(r.notes.empty());
  EXPECT_EQ(r.c.optimizer, OptimizerKind::sgd);
  EXPECT_DOUBLE_EQ(r.c.bnMomentum, 0.1);  // no seed field: PyTorch sense, as written
  EXPECT_EQ(r.c.anchors, (DoubleList{10, 20}));
}

// useAdam (true -> adam; false -> SGD, the seed's default optimizer), cosineDecay, vitInit.
TEST(SeedAliases, OptimizerScheduleAndInitSwitches) {
  Read r = read(R"({"useAdam": true, "cosineDecay": true, "vitInit": true})");
  EXPECT_EQ(r.c.optimizer, OptimizerKind::adam);
  EXPECT_EQ(r.c.schedule, Schedule::cosine);
  EXPECT_EQ(r.c.init, InitKind::vit);
  has_note(r, "seed field useAdam=true read as optimizer=adam");
  has_note(r, "seed field cosineDecay=true read as schedule=cosine");
  has_note(r, "seed field vitInit=true read as init=vit");
  EXPECT_EQ(r.notes.size(), 3u);

  r = read(R"({"useAdam": false, "cosineDecay": false, "cnxInit": true})");
  EXPECT_EQ(r.c.optimizer, OptimizerKind::sgd);
  EXPECT_EQ(r.c.schedule, Schedule::constant);
  EXPECT_EQ(r.c.init, InitKind::convnext);
  // The seed reads useAdam only while optimizer is left at sgd.
  r = read(R"({"useAdam": true, "optimizer": "rmsprop"})");
  EXPECT_EQ(r.c.optimizer, OptimizerKind::rmsprop);
  r = read(R"({"useAdam": true, "optimizer": "sgd"})");
  EXPECT_EQ(r.c.optimizer, OptimizerKind::adam);
  r = read(R"({"useMuon": true, "useAdam": true})");
  EXPECT_EQ(r.c.optimizer, OptimizerKind::muon);
  // expLRDecayRate > 0 is selected over cosine (the seed); 0 is off.
  r = read(R"({"cosineDecay": true, "expLRDecayRate": 0.97, "expLRDecayEpochs": 2.4})");
  EXPECT_EQ(r.c.schedule, Schedule::exponential);
  EXPECT_DOUBLE_EQ(r.c.expLRDecayRate, 0.97);
  r = read(R"({"cosineDecay": true, "expLRDecayRate": 0})");
  EXPECT_EQ(r.c.schedule, Schedule::cosine);
}

TEST(SeedAliases, AugmentationSwitchesAndSoftLabels) {
  Read r = read(R"({"useMixup": true, "mixupAlpha": 0.4, "useCutmix": true,
    "useRandAugment": true, "randAugmentInc": true, "useAutoAugment": false,
    "valEveryEpochs": 5})");
  EXPECT_TRUE(r.c.mixup);
  EXPECT_DOUBLE_EQ(r.c.mixupAlpha, 0.4);
  EXPECT_TRUE(r.c.cutmix);
  EXPECT_TRUE(r.c.randAugment);
  EXPECT_TRUE(r.c.randAugmentIncreasing);
  EXPECT_FALSE(r.c.autoAugment);
  EXPECT_EQ(r.c.evalEveryNEpochs, 5);
  EXPECT_EQ(r.c.lossKind, LossKind::softLabelCE);  // mixup -> soft labels
  has_note(r, "seed field useMixup=true read as mixup=true");
  has_note(r, "seed field randAugmentInc=true read as randAugmentIncreasing=true");
  has_note(r, "seed field valEveryEpochs=5 read as evalEveryNEpochs=5");
  has_note(r, "seed field useMixup=true read as lossKind=softLabelCE");
  r = read(R"({"useKnnMixup": true, "knnMixupAlpha": 2.0, "valEveryEpochs": 0})");
  EXPECT_TRUE(r.c.knnMixup);
  EXPECT_DOUBLE_EQ(r.c.knnMixupAlpha, 2.0);
  EXPECT_EQ(r.c.evalEveryNEpochs, 1);  // N <= 1: every epoch
  EXPECT_EQ(r.c.lossKind, LossKind::softLabelCE);
}

TEST(SeedAliases, LossKindDerivedFromTheOlderSwitches) {
  EXPECT_EQ(read(R"({"useYolov1": true})").c.lossKind, LossKind::yolov1Masked);
  EXPECT_EQ(read(R"({"useSeg": true})").c.lossKind, LossKind::perPixelCE);
  EXPECT_EQ(read(R"({"useFocal": true, "focalGamma": 1.5})").c.lossKind, LossKind::focal);
  // anchors route the seed's YOLO loss to the anchor path.
  EXPECT_EQ(read(R"({"useYolov1": true, "anchors": [[0.5, 0.25]]})").c.lossKind,
            LossKind::yoloAnchor);
  // An explicit lossKind other than classCE is read first.
  EXPECT_EQ(read(R"({"useSeg": true, "lossKind": "perPixelDice"})").c.lossKind,
            LossKind::perPixelDice);
  EXPECT_EQ(read(R"({"useSeg": true, "lossKind": "classCE"})").c.lossKind, LossKind::perPixelCE);
  EXPECT_EQ(error_of(R"({"useSeg": true, "useYolov1": true})"),
            "seed.json:3:29: error: [train] seed fields useYolov1 and useSeg derive different "
            "losses (yolov1Masked and perPixelCE): give lossKind");
}

// Same names, the seed's units: bnMomentum (TF: weight of the old estimate), anchors relative
// to the image, headPriorBias a list, bootstrapBackbone (path, prefixFloats).
TEST(SeedAliases, UnitsConverted) {
  Read r = read(R"({"useAdam": true, "bnMomentum": 0.9, "anchors": [[0.5, 0.25], [0.1, 1]],
    "headPriorBias": [-2.3, -0.1], "bootstrapBackbone": ["r34.safetensors", 1000],
    "detPriorPi": 0, "testCropRatio": 0, "gradAccumSteps": 0})");
  EXPECT_NEAR(r.c.bnMomentum, 0.1, 1e-15);
  EXPECT_EQ(r.c.anchors, (DoubleList{16, 16, 3.2, 64}));  // w·32, h·64
  EXPECT_TRUE(r.c.headPriorBias);
  EXPECT_EQ(r.c.bootstrapBackbone, "r34.safetensors");
  EXPECT_EQ(r.c.bootstrapRanges, "floats:1000");
  EXPECT_DOUBLE_EQ(r.c.detPriorPi, 0.5);  // zero bias: sigmoid 0.5
  EXPECT_DOUBLE_EQ(r.c.testCropRatio, 0.875);
  EXPECT_EQ(r.c.gradAccumSteps, 1);
  has_note(r, "seed field bnMomentum=0.9 read as bnMomentum=0.09999999999999998 (PyTorch: "
              "weight of the new batch)");
  has_note(r, "seed field anchors=[[0.5,0.25],[0.1,1]] read as anchors=[16.0,16.0,3.2,64.0] "
              "(pixels of the 32x64 input)");
  EXPECT_EQ(r.notes.size(), 8u);
  // bnMomentum is the TF sense only in a train object that uses seed fields.
  EXPECT_DOUBLE_EQ(read(R"({"bnMomentum": 0.9})").c.bnMomentum, 0.9);
  EXPECT_NEAR(read(R"({"seedConfig": true, "bnMomentum": 0.99})").c.bnMomentum, 0.01, 1e-15);
}

TEST(SeedAliases, RefusedByNameWithPosition) {
  EXPECT_EQ(error_of(R"({"bootstrapBackboneRange": ["a.bin", 0, 0, 10]})"),
            "seed.json:3:13: error: [train] seed field bootstrapBackboneRange (raw float offsets "
            "into a parameter blob) has no netspec equivalent: give bootstrapBackbone and "
            "bootstrapRanges (layer indices)");
  EXPECT_NE(error_of(R"({"fpnScales": [[56, [[0.1, 0.1]]]]})").find("seed field fpnScales as "
                                                                    "(grid, anchors) pairs"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"useAdam": true, "checkpointEveryNEpochs": 0})")
                .find("checkpointEveryNEpochs=0 (no intermediate snapshots) has no netspec"),
            std::string::npos);
  EXPECT_EQ(error_of(R"({"useAdam": 1})"),
            "seed.json:3:13: error: [train] seed field 'useAdam' has the wrong type (got 1, "
            "expected true or false)");
  EXPECT_NE(error_of(R"({"useMixup": true, "mixup": false})")
                .find("seed field 'useMixup' and field 'mixup' both given (give one)"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"useAdam": true, "bnMomentum": 1})").find("must be in [0, 1)"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"bootstrapBackbone": ["a", -3]})")
                .find("bootstrapBackbone must be [path, prefixFloats >= 1]"),
            std::string::npos);
}

// The converted object round-trips: save writes netspec's names, which load unchanged.
TEST(SeedAliases, SavedInNetspecNames) {
  std::vector<std::string> notes;
  SpecFile s = parse_spec(spec_with(R"({"useAdam": false, "useMixup": true})"), "s", &notes);
  const std::string saved = dump_spec(s);
  EXPECT_EQ(saved.find("useMixup"), std::string::npos);
  std::vector<std::string> again;
  EXPECT_EQ(parse_spec(saved, "saved", &again), s);
  EXPECT_TRUE(again.empty());
}

}  // namespace
}  // namespace netspec
