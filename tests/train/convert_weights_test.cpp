// The state-dict mapping (train/convert_weights.h) on synthetic PyTorch-style state dicts built
// from resnet18's ParamTable (no Python): file order, the safetensors library's sorted order,
// and each refusal naming the key, the netspec name and both shapes.
#include "train/convert_weights.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "layers/param_table.h"
#include "spec/zoo.h"

namespace netspec::train {
namespace {

ParamTable resnet18() {
  NetSpec net = resolve_net("resnet18").net;
  set_num_classes(net, 10);
  return build_param_table(net);
}

// PyTorch's state_dict order: each BN's weight, bias, running_mean, running_var,
// num_batches_tracked; tensor k starts with the value k, so each placement can be checked.
TorchTensors state_dict(const ParamTable& t) {
  TorchTensors sd;
  sd.format = "test";
  float k = 0;
  auto filled = [&](const Shape& s) {
    Tensor x(DType::kF32, s);
    float* p = x.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) p[i] = k + static_cast<float>(i % 1000) * 1e-3f;
    k += 1;
    return x;
  };
  for (const ParamDesc& p : t.params) {
    sd.tensors.emplace_back("m." + p.name, filled(p.shape));
    for (const BnDesc& bn : t.bns)
      if (p.name == bn.name + ".bias") {
        sd.tensors.emplace_back("m." + bn.name + ".running_mean", filled({bn.channels}));
        sd.tensors.emplace_back("m." + bn.name + ".running_var", filled({bn.channels}));
        sd.tensors.emplace_back("m." + bn.name + ".num_batches_tracked", Tensor(DType::kI64, {}));
      }
  }
  return sd;
}

const Tensor& file_tensor(const TorchTensors& sd, const std::string& name) {
  for (const auto& [n, x] : sd.tensors)
    if (n == name) return x;
  throw std::runtime_error("no " + name);
}

void expect_refusal(const TorchTensors& sd, const ParamTable& t, const std::string& what) {
  try {
    convert_state_dict(sd, t, "w.pth");
    ADD_FAILURE() << "expected a refusal mentioning '" << what << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

void expect_mapped(const ConvertedWeights& cw, const TorchTensors& sd, const ParamTable& t) {
  ASSERT_EQ(cw.st.tensors.size(), t.params.size() + 2 * t.bns.size());
  for (size_t i = 0; i < cw.mapping.size(); ++i) {
    const auto& [ns, file] = cw.mapping[i];
    EXPECT_EQ(file, "m." + ns);
    EXPECT_EQ(cw.st.tensors[i].first, ns);
    const Tensor& want = file_tensor(sd, file);
    EXPECT_EQ(cw.st.tensors[i].second.data<float>()[0], want.data<float>()[0]) << ns;
  }
  EXPECT_EQ(cw.mapping.back().first, t.bns.back().name + ".running_var");
  EXPECT_EQ(cw.batches_tracked, static_cast<int64_t>(t.bns.size()));
}

TEST(ConvertWeights, FileOrderMapsByPosition) {
  const ParamTable t = resnet18();
  const TorchTensors sd = state_dict(t);
  ConvertedWeights cw = convert_state_dict(sd, t, "w.pth");
  expect_mapped(cw, sd, t);
  EXPECT_FALSE(cw.reordered);
  EXPECT_TRUE(cw.unused.empty());
}

// Sorted names ("layers.10" before "layers.2", "bias" before "weight", bn1 before conv1): the
// module tree, natural order and shapes put every tensor back.
TEST(ConvertWeights, LibraryOrderIsPlacedByModuleTree) {
  const ParamTable t = resnet18();
  TorchTensors sd = state_dict(t);
  std::sort(sd.tensors.begin(), sd.tensors.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  sd.library_order = true;
  ConvertedWeights cw = convert_state_dict(sd, t, "w.safetensors");
  expect_mapped(cw, sd, t);
  EXPECT_TRUE(cw.reordered);
}

TEST(ConvertWeights, RefusalsNameTheKeyAndShapes) {
  const ParamTable t = resnet18();
  TorchTensors shape = state_dict(t);
  for (auto& [n, x] : shape.tensors)
    if (n == "m.layers.2.block0.conv1.weight") x = Tensor(DType::kF32, {7});
  expect_refusal(shape, t,
                 "'m.layers.2.block0.conv1.weight' -> layers.2.block0.conv1.weight: shape (got "
                 "[7], expected [64, 64, 3, 3])");

  TorchTensors head = state_dict(t);
  for (auto& [n, x] : head.tensors)
    if (n.find("layers.8.") != std::string::npos)
      x = Tensor(DType::kF32, n.back() == 't' ? Shape{5, 512} : Shape{5});
  expect_refusal(head, t, "this is the head: convert with --classes 5");

  // Sorted names carry no order: the error names how far the arrangement got.
  TorchTensors sorted_head = head;
  std::sort(sorted_head.tensors.begin(), sorted_head.tensors.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  sorted_head.library_order = true;
  expect_refusal(sorted_head, t,
                 fmt::format("the furthest reaches netspec's layers.8.weight [10, 512] (tensor {} "
                             "of {}; tried 'm.layers.8.weight' [5, 512], 'm.layers.8.bias' [5]); "
                             "this is the head: convert with --classes 5",
                             t.params.size() - 1, t.params.size()));

  TorchTensors missing = state_dict(t);
  std::erase_if(missing.tensors,
                [](const auto& e) { return e.first == "m.layers.2.block0.conv1.weight"; });
  expect_refusal(missing, t,
                 fmt::format("parameter count (got {} tensors in the file, expected {}",
                             t.params.size() - 1, t.params.size()));

  TorchTensors no_var = state_dict(t);
  std::erase_if(no_var.tensors,
                [](const auto& e) { return e.first == "m.layers.0.bn.running_var"; });
  expect_refusal(no_var, t, "the file has no 'm.layers.0.bn.running_var'");

  TorchTensors orphan = state_dict(t);
  orphan.tensors.emplace_back("extra.running_mean", Tensor(DType::kF32, {3}));
  expect_refusal(orphan, t,
                 "running statistics that belong to no netspec BN (got 1: extra.running_mean)");

  TorchTensors aux = state_dict(t);
  aux.tensors.emplace_back("aux1.fc.weight", Tensor(DType::kF32, {10, 3}));
  aux.tensors.emplace_back("layers.0.relative_position_index", Tensor(DType::kI64, {4}));
  ConvertedWeights cw = convert_state_dict(aux, t, "w.pth");
  EXPECT_EQ(cw.unused,
            (std::vector<std::string>{"aux1.fc.weight", "layers.0.relative_position_index"}));
}

// Issue 40 item 3: one name of 10^6 dots once built a tree 10^6 nodes deep that the leaf count
// (and the aligner) walked by recursion until the stack overflowed.
TEST(ConvertWeights, RefusesANameNestedPastTheDepthCapWithoutRecursing) {
  const ParamTable t = resnet18();
  TorchTensors deep = state_dict(t);
  std::string name;
  for (int i = 0; i < 1'000'000; ++i) name += "a.";
  deep.tensors[0].first = name + "weight";
  deep.library_order = true;
  expect_refusal(deep, t, "parameter name 'a.a.a.");
  expect_refusal(deep, t, "nests 1000000 modules deep (expected at most 255)");
  // 255 dots are still read: the deep module holds the stem's weight, placed first.
  TorchTensors ok = state_dict(t);
  std::string at_cap;
  for (int i = 0; i < 255; ++i) at_cap += "a.";
  ok.tensors[0].first = at_cap + "weight";
  ok.library_order = true;
  ConvertedWeights cw = convert_state_dict(ok, t, "w.pth");
  EXPECT_EQ(cw.mapping[0], std::make_pair(t.params[0].name, at_cap + "weight"));
}

}  // namespace
}  // namespace netspec::train
