// Shared fixtures of the trainer tests: fresh temp dirs, synthetic Fashion-MNIST splits, a small
// MLP spec and uniform noise.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/datasets.h"
#include "data/idx_fixture.h"
#include "spec/spec_json.h"

namespace netspec::train::test_util {

// A fresh, empty directory netspec_<prefix>_<name>_<pid> under the system temp dir.
inline std::string tmpdir(const std::string& prefix, const std::string& name) {
  namespace fs = std::filesystem;
  auto p = fs::temp_directory_path() /
           ("netspec_" + prefix + "_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

// A synthetic Fashion-MNIST layout written into dir (idx_fixture.h: n_train training and n_test
// test records, drawn with seeds seed and seed + 1), loaded.
inline data::Splits synthetic_fashion(const std::string& dir, int n_train, int n_test,
                                      uint32_t seed) {
  test::write_synthetic_split(dir, "train", n_train, seed);
  test::write_synthetic_split(dir, "t10k", n_test, seed + 1);
  return data::load_dataset(DatasetKind::fashionMnist, dir, 0);
}

// flatten -> dense 784->32 relu -> dense 32->10, for 1x28x28 inputs.
inline const char* kSmallMlp = R"({"name": "small", "inputChannels": 1, "inputHeight": 28,
  "inputWidth": 28, "layers": [{"kind": "flatten"},
  {"kind": "dense", "in": 784, "out": 32, "act": "relu"}, {"kind": "dense", "in": 32, "out": 10}]})";

// kSmallMlp on Fashion-MNIST-shaped data: `epochs` epochs of batch 32, lr 1e-3, `seed`.
inline SpecFile small_mlp_spec(int epochs, int seed = 7) {
  SpecFile s = parse_spec(kSmallMlp);
  TrainConfig c;
  c.dataset = DatasetKind::fashionMnist;
  c.epochs = epochs;
  c.batchSize = 32;
  c.learningRate = 1e-3;
  c.seed = seed;
  s.train = c;
  return s;
}

// f32 tensor of shape s with values uniform in [-1, 1) from a 64-bit LCG seeded by `seed`.
inline Tensor uniform_noise(const Shape& s, uint64_t seed) {
  Tensor t(DType::kF32, s);
  uint64_t z = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;
    t.data<float>()[i] = static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-53 * 2 - 1);
  }
  return t;
}

// convBn 1->4 (3x3, stride 2) -> convBn 4->4 -> global average pool -> dense 4->10.
inline const char* kBnNet = R"({"name": "bnsmall", "inputChannels": 1, "inputHeight": 28,
  "inputWidth": 28, "layers": [{"kind": "convBn", "ic": 1, "oc": 4, "k": 3, "stride": 2},
  {"kind": "convBn", "ic": 4, "oc": 4, "k": 3}, {"kind": "globalAvgPool"},
  {"kind": "flatten"}, {"kind": "dense", "in": 4, "out": 10}]})";

// kBnNet on Fashion-MNIST-shaped data: SGD momentum 0.9, lr 0.05, seed 3.
inline SpecFile bn_spec(int epochs, int batch, bool sync) {
  SpecFile s = parse_spec(kBnNet);
  TrainConfig c;
  c.dataset = DatasetKind::fashionMnist;
  c.epochs = epochs;
  c.batchSize = batch;
  c.optimizer = OptimizerKind::sgd;
  c.momentum = 0.9;
  c.learningRate = 0.05;
  c.seed = 3;
  c.syncBN = sync;
  s.train = c;
  return s;
}

// Over tensors, the largest max|a - b| / (1 + max|b|).
inline double scaled_diff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double m = 0, e = 0;
    for (int64_t j = 0; j < a[i].numel(); ++j) {
      m = std::max(m, std::abs(b.at(i).as_double(j)));
      e = std::max(e, std::abs(a[i].as_double(j) - b.at(i).as_double(j)));
    }
    d = std::max(d, e / (1 + m));
  }
  return d;
}

// Same tensors bit for bit (sizes and bytes).
inline bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].nbytes() != b[i].nbytes() || std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()))
      return false;
  return true;
}

// A 5-stage conv-BN backbone with an FPN yoloAnchor head (2 classes) on 3x64x64, and the loss
// fields its head needs (the detection tests' small detector).
inline SpecFile det_tiny_spec() {
  SpecFile s;
  s.net = NetBuilder("det_tiny")
              .input(3, 64, 64)
              .add(ConvBn{3, 16, 3, 2})
              .add(ConvBn{16, 32, 3, 2})
              .add(ConvBn{32, 32, 3, 2})
              .add(ConvBn{32, 48, 3, 2})
              .add(ConvBn{48, 64, 3, 2})
              .add(FpnDetect{7, 32, 48, 64, 32, 2, 1})
              .build();
  TrainConfig c;
  c.lossKind = LossKind::yoloAnchor;
  c.anchors = {12, 12, 18, 18, 24, 24, 30, 30, 40, 40, 60, 60};
  c.fpnScales = {8, 16, 32};
  s.train = c;
  return s;
}

}  // namespace netspec::train::test_util
