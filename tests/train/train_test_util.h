// Shared fixtures of the trainer tests: fresh temp dirs, a small MLP spec and uniform noise.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/tensor.h"

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

// flatten -> dense 784->32 relu -> dense 32->10, for 1x28x28 inputs.
inline const char* kSmallMlp = R"({"name": "small", "inputChannels": 1, "inputHeight": 28,
  "inputWidth": 28, "layers": [{"kind": "flatten"},
  {"kind": "dense", "in": 784, "out": 32, "act": "relu"}, {"kind": "dense", "in": 32, "out": 10}]})";

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

// Same tensors bit for bit (sizes and bytes).
inline bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].nbytes() != b[i].nbytes() || std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()))
      return false;
  return true;
}

}  // namespace netspec::train::test_util
