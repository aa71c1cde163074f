// Fixtures of the streaming CLI tests (stream_cli_test, stream_eval_cli_test): a small image-folder
// tree, tiny nets for it, and a run's per-step losses.
#pragma once
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "data/image_fixture.h"

namespace netspec::cli_test {

// DIR/{train,val}/<c0..c2>/: JPEGs and PNGs of varied sizes (14-33 px a side, times `scale`)
// whose colour is the class.
inline void write_tree(const std::filesystem::path& d, int scale = 1) {
  namespace fs = std::filesystem;
  std::mt19937 r(3);
  for (const char* split : {"train", "val"})
    for (int c = 0; c < 3; ++c) {
      fs::create_directories(d / split / fmt::format("c{}", c));
      for (int i = 0; i < (split[0] == 't' ? 10 : 4); ++i) {
        const int w = (14 + static_cast<int>(r() % 20)) * scale;
        const int h = (14 + static_cast<int>(r() % 20)) * scale;
        std::vector<uint8_t> px(static_cast<size_t>(w * h * 3));
        for (size_t k = 0; k < px.size(); ++k)
          px[k] = static_cast<uint8_t>(k % 3 == static_cast<size_t>(c) ? 200 : r() % 90);
        const fs::path base = d / split / fmt::format("c{}", c) / fmt::format("{:02}", i);
        if (i % 2)
          std::ofstream(base.string() + ".jpg", std::ios::binary) << test::jpeg_bytes(w, h, 3, px);
        else
          test::write_png(base.string() + ".png", w, h, PNG_FORMAT_RGB, px);
      }
    }
}

// DIR/net.json: flatten + dense 432 -> 3 on 3x12x12 inputs.
inline std::filesystem::path spec(const std::filesystem::path& d) {
  std::filesystem::path p = d / "net.json";
  std::ofstream(p) << R"({"name": "tiny-stream", "inputChannels": 3, "inputHeight": 12,
 "inputWidth": 12, "layers": [{"kind": "flatten"}, {"kind": "dense", "in": 432, "out": 3}]})";
  return p;
}

// convBn 3->4 (stride 2) -> global average pool -> dense 4->3 on 3x12x12: a net trainRes accepts.
inline std::filesystem::path pooled_spec(const std::filesystem::path& d) {
  std::filesystem::path p = d / "gap.json";
  std::ofstream(p) << R"({"name": "tiny-gap", "inputChannels": 3, "inputHeight": 12,
 "inputWidth": 12, "layers": [{"kind": "convBn", "ic": 3, "oc": 4, "k": 3, "stride": 2},
 {"kind": "globalAvgPool"}, {"kind": "flatten"}, {"kind": "dense", "in": 4, "out": 3}]})";
  return p;
}

// The per-step losses of a run (steps.csv without its timing columns).
inline std::string step_losses(const std::filesystem::path& run) {
  std::ifstream f(run / "steps.csv");
  std::string out;
  for (std::string line; std::getline(f, line);) {
    int commas = 0;
    size_t k = 0;
    while (k < line.size() && !(line[k] == ',' && ++commas == 4)) ++k;
    out += line.substr(0, k) + "\n";  // step, epoch, train_loss, lr
  }
  return out;
}

}  // namespace netspec::cli_test
