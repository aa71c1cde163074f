// `netspec train` of a DETR spec (lossKind detrSet) on synthetic VOC data, then `netspec predict`
// on its run directory: the run reports mAP and predict prints boxes (one per query above the
// score threshold, at most the number of queries).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"

namespace netspec::cli_test {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

TEST(DetrCli, TrainsAndPredictsBoxes) {
  const fs::path d = temp_dir("detr", "cli");
  Result t = train_tiny_detr(d);
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_TRUE(has(t.out, "lossKind = detrSet")) << t.out;
  EXPECT_TRUE(has(t.out, "mAP@0.5")) << t.out;
  // VOC's JPEGImages hold real JPEG files under .jpg names (FF D8 FF), trained and evaluated on.
  const fs::path img = *fs::directory_iterator(d / "voc" / "JPEGImages");
  EXPECT_EQ(img.extension(), ".jpg") << img;
  std::ifstream jf(img, std::ios::binary);
  unsigned char magic[3] = {};
  jf.read(reinterpret_cast<char*>(magic), 3);
  EXPECT_TRUE(magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF) << img;
  Result p = sh(fmt::format("predict {} {} --json --score 0", (d / "run").string(), img.string()));
  ASSERT_EQ(p.status, 0) << p.out;
  const size_t at = p.out.rfind("\n[\n");  // the JSON array after the printed boxes
  ASSERT_NE(at, std::string::npos) << p.out;
  auto j = nlohmann::json::parse(p.out.substr(at + 1));
  ASSERT_EQ(j.size(), 1u) << p.out;
  const auto& boxes = j[0].at("detections");
  EXPECT_GE(boxes.size(), 1u) << p.out;
  EXPECT_LE(boxes.size(), 5u) << p.out;
  for (const auto& b : boxes) {
    EXPECT_GE(b.at("class").get<int>(), 0);
    EXPECT_LT(b.at("class").get<int>(), 2);
  }
}

}  // namespace
}  // namespace netspec::cli_test
