// Shared helpers for the CLI tests: run the built `netspec` binary through /bin/sh and capture
// its exit status and output, and make a per-process temporary directory.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "data/idx_fixture.h"

namespace netspec::cli_test {

struct Result {
  int status;
  std::string out;  // stdout + stderr
};

// Runs `ENV netspec ARGS` (ENV: shell assignments such as "PATH=", may be empty).
inline Result run_netspec(const std::string& env, const std::string& args) {
  std::string cmd = env + " " + std::string(NETSPEC_BINARY_DIR) + "/netspec " + args + " 2>&1";
  Result r{0, ""};
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline Result sh(const std::string& args) { return run_netspec("", args); }

// A fresh, empty directory under the system temp dir, unique per test process.
inline std::filesystem::path temp_dir(const std::string& prefix, const std::string& name) {
  namespace fs = std::filesystem;
  fs::path d = fs::temp_directory_path() / (prefix + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Runs a /bin/sh script (single quotes not allowed inside) and returns its stdout.
inline std::string run_script(const std::string& script) {
  FILE* p = popen(("sh -c '" + script + "'").c_str(), "r");
  std::string out;
  char buf[256];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// A synthetic Fashion-MNIST-shaped set in a fresh temp dir (the class lights one image tile):
// n_train training and n_test test samples drawn from `seed` and seed + 1.
inline std::filesystem::path synthetic_fashion(const std::string& prefix, int n_train, int n_test,
                                               int seed) {
  std::filesystem::path p = temp_dir(prefix, "data");
  test::write_synthetic_split(p.string(), "train", n_train, seed);
  test::write_synthetic_split(p.string(), "t10k", n_test, seed + 1);
  return p;
}

// A tiny DETR (2 classes, 5 queries) for synthetic VOC at 32 x 32, trained in seconds.
constexpr const char* kTinyDetr = R"({"name": "detr-cli", "inputChannels": 3, "inputHeight": 32,
  "inputWidth": 32, "layers": [
    {"kind": "patchEmbed", "ic": 3, "dim": 16, "patch": 8, "nPatches": 16, "classToken": false},
    {"kind": "transformerEncoder", "dim": 16, "heads": 2, "mlpDim": 32, "nBlocks": 1,
     "keepSequence": true},
    {"kind": "transformerDecoder", "dim": 16, "heads": 2, "mlpDim": 32, "nBlocks": 1, "nQueries": 5},
    {"kind": "detrHeads", "dim": 16, "nClasses": 2}],
  "train": {"dataset": "voc", "optimizer": "adam", "learningRate": 0.003, "batchSize": 8,
            "epochs": 2, "lossKind": "detrSet"}})";

// Synthetic VOC (30 images of 32 px, 2 classes) in DIR/voc and kTinyDetr trained on it into
// DIR/run: the data synthesis's result when it fails, else the training's.
inline Result train_tiny_detr(const std::filesystem::path& d) {
  std::ofstream(d / "detr.json") << kTinyDetr;
  Result g = sh("data synth --task det --format voc --n 30 --size 32 --classes 2 -o " +
                (d / "voc").string());
  if (g.status != 0) return g;
  return sh("train " + (d / "detr.json").string() + " --data " + (d / "voc").string() +
            " --run-dir " + (d / "run").string());
}

// A tiny causal token model (32 ids, window 32) for small text corpora.
constexpr const char* kTinyGpt = R"({"name": "tok-small", "inputChannels": 32, "inputHeight": 0,
 "inputWidth": 0, "layers": [
  {"kind": "tokenPositionEmbed", "vocab": 32, "seqLen": 32, "dModel": 32, "posEmb": false},
  {"kind": "transformerEncoder", "dim": 32, "heads": 2, "mlpDim": 64, "nBlocks": 1,
   "causalMask": true, "keepSequence": true, "rope": true},
  {"kind": "lmHead", "dModel": 32, "vocab": 32, "seqLen": 32}],
 "train": {"dataset": "text", "optimizer": "adam", "learningRate": 0.003, "batchSize": 16,
   "epochs": 12, "lossKind": "tokenCE", "init": "vit", "gradClipNorm": 1.0}})";

}  // namespace netspec::cli_test
