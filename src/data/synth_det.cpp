// Procedural detection images in VOC / COCO layout (synth_det.h).
#include "data/synth_det.h"

#include <fmt/format.h>
#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.h"
#include "core/tensor.h"
#include "data/det_boxes.h"
#include "data/image_write.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNames[] = {"rect", "ellipse", "triangle", "cross"};
constexpr uint8_t kColours[4][3] = {{220, 40, 40}, {40, 200, 60}, {50, 80, 230}, {230, 200, 40}};

// Is the pixel centre (px, py) inside the shape of class c drawn in box b?
bool inside(int c, const Box& b, double px, double py) {
  const double u = (px - b.x0) / b.w(), v = (py - b.y0) / b.h();  // [0, 1] in the box
  if (u < 0 || u > 1 || v < 0 || v > 1) return false;
  switch (c) {
    case 0:
      return true;
    case 1:
      return (u - 0.5) * (u - 0.5) + (v - 0.5) * (v - 0.5) <= 0.25;
    case 2:  // apex at the top centre (half a pixel wide so the top row is drawn), base at the
             // bottom
      return std::abs(u - 0.5) <= v / 2 + 0.5 / b.w();
    default:
      return std::abs(u - 0.5) <= 0.17 || std::abs(v - 0.5) <= 0.17;
  }
}

void write_png_rgb(const std::string& path, const std::vector<uint8_t>& hwc, int64_t w, int64_t h) {
  png_image im;
  std::memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  im.width = static_cast<png_uint_32>(w);
  im.height = static_cast<png_uint_32>(h);
  im.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&im, path.c_str(), 0, hwc.data(), 0, nullptr))
    fail("synth", "{}: cannot write PNG ({})", path, im.message);
}

// VOC's JPEGImages hold JPEG files (libjpeg, quality kJpegQuality): interleaved RGB [H, W, 3]
// rearranged to the writer's [3, H, W].
constexpr int kJpegQuality = 95;
void write_jpeg_rgb(const std::string& path, const std::vector<uint8_t>& hwc, int64_t w,
                    int64_t h) {
  Tensor chw(DType::kUI8, {3, h, w});
  uint8_t* d = chw.data<uint8_t>();
  for (int64_t q = 0; q < h * w; ++q)
    for (int64_t c = 0; c < 3; ++c) d[c * h * w + q] = hwc[size_t(q * 3 + c)];
  write_jpeg(path, chw, kJpegQuality);
}

void write_text(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  if (!(f << s)) fail("synth", "{}: cannot write", p.string());
}

}  // namespace

std::vector<std::string> synth_det_classes(int64_t classes) {
  return std::vector<std::string>(kNames, kNames + classes);
}

int64_t write_synth_det(const SynthDetOptions& o) {
  if (o.format != "voc" && o.format != "coco")
    fail("synth", "--format must be voc or coco (got '{}')", o.format);
  if (o.classes < 1 || o.classes > 4) fail("synth", "--classes must be 1..4 (got {})", o.classes);
  if (o.n < 1 || o.size < 32) fail("synth", "--n >= 1 and --size >= 32 (got {}, {})", o.n, o.size);
  if (o.dir.empty()) fail("synth", "an output directory (-o) is required");
  const fs::path root(o.dir);
  const bool voc = o.format == "voc";
  const fs::path img_dir = root / (voc ? "JPEGImages" : "images");
  const fs::path ann_dir = root / (voc ? "Annotations" : "annotations");
  fs::create_directories(img_dir);
  fs::create_directories(ann_dir);
  std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ULL + 1);
  std::uniform_real_distribution<double> u(0, 1);
  const int64_t s = o.size,
                n_val = std::clamp<int64_t>(std::llround(double(o.n) * o.val_fraction), 0, o.n - 1);
  std::string train_ids, val_ids;
  nlohmann::json coco[2];
  for (auto& j : coco) {
    j["images"] = nlohmann::json::array();
    j["annotations"] = nlohmann::json::array();
    j["categories"] = nlohmann::json::array();
    for (int64_t c = 0; c < o.classes; ++c)
      j["categories"].push_back({{"id", c + 1}, {"name", kNames[c]}});
  }
  int64_t total = 0, ann_id = 1;
  for (int64_t i = 0; i < o.n; ++i) {
    // Background: a random linear gradient between two dull colours plus ±8 noise.
    double c0[3], c1[3];
    for (int k = 0; k < 3; ++k) c0[k] = 40 + 120 * u(rng), c1[k] = 40 + 120 * u(rng);
    const double ang = 6.2832 * u(rng), gx = std::cos(ang), gy = std::sin(ang);
    std::vector<uint8_t> px(s * s * 3);
    for (int64_t y = 0; y < s; ++y)
      for (int64_t x = 0; x < s; ++x) {
        const double t = 0.5 + 0.5 * ((double(x) / s - 0.5) * gx + (double(y) / s - 0.5) * gy);
        for (int k = 0; k < 3; ++k)
          px[(y * s + x) * 3 + k] =
              uint8_t(std::clamp(c0[k] + (c1[k] - c0[k]) * t + 16 * (u(rng) - 0.5), 0.0, 255.0));
      }
    // 1-4 objects, integer corners, side in [s/8, s/2.5], IoU <= 0.2 with the others.
    std::vector<Box> boxes;
    const int count = 1 + int(u(rng) * 4);
    for (int tries = 0; int(boxes.size()) < count && tries < 50; ++tries) {
      const double bw = std::round(s / 8.0 + u(rng) * (s / 2.5 - s / 8.0));
      const double bh = std::round(std::clamp(bw * (0.6 + 0.8 * u(rng)), s / 8.0, s / 2.5));
      const double x0 = std::floor(u(rng) * (double(s) - bw)),
                   y0 = std::floor(u(rng) * (double(s) - bh));
      Box b{x0, y0, x0 + bw, y0 + bh, int(u(rng) * double(o.classes))};
      bool ok = true;
      for (const Box& q : boxes) ok = ok && box_iou(b, q) <= 0.2;
      if (ok) boxes.push_back(b);
    }
    for (const Box& b : boxes) {
      uint8_t col[3];
      for (int k = 0; k < 3; ++k)
        col[k] = uint8_t(std::clamp(kColours[b.cls][k] + 30 * (u(rng) - 0.5), 0.0, 255.0));
      for (int64_t y = int64_t(b.y0); y < int64_t(b.y1); ++y)
        for (int64_t x = int64_t(b.x0); x < int64_t(b.x1); ++x)
          if (inside(b.cls, b, double(x) + 0.5, double(y) + 0.5))
            std::copy_n(col, 3, &px[(y * s + x) * 3]);
    }
    // The shapes' extents are their boxes: rect, ellipse, triangle and cross all touch all four
    // sides at pixel centres for the sizes drawn (>= s/8 px).
    const std::string id = fmt::format("{:06d}", i);
    const std::string file = id + (voc ? ".jpg" : ".png");
    if (voc)
      write_jpeg_rgb((img_dir / file).string(), px, s, s);
    else
      write_png_rgb((img_dir / file).string(), px, s, s);
    const bool is_val = i >= o.n - n_val;
    total += int64_t(boxes.size());
    if (voc) {
      std::string x = fmt::format(
          "<annotation>\n  <folder>JPEGImages</folder>\n  <filename>{}</filename>\n  <size>\n"
          "    <width>{}</width>\n    <height>{}</height>\n    <depth>3</depth>\n  </size>\n",
          file, s, s);
      for (const Box& b : boxes)
        x += fmt::format(
            "  <object>\n    <name>{}</name>\n    <difficult>0</difficult>\n    <bndbox>\n"
            "      <xmin>{}</xmin>\n      <ymin>{}</ymin>\n      <xmax>{}</xmax>\n"
            "      <ymax>{}</ymax>\n    </bndbox>\n  </object>\n",
            kNames[b.cls], b.x0, b.y0, b.x1, b.y1);
      write_text(ann_dir / (id + ".xml"), x + "</annotation>\n");
      (is_val ? val_ids : train_ids) += id + "\n";
    } else {
      nlohmann::json& j = coco[is_val ? 1 : 0];
      j["images"].push_back({{"id", i + 1}, {"file_name", file}, {"width", s}, {"height", s}});
      for (const Box& b : boxes)
        j["annotations"].push_back({{"id", ann_id++},
                                    {"image_id", i + 1},
                                    {"category_id", b.cls + 1},
                                    {"bbox", {b.x0, b.y0, b.w(), b.h()}},
                                    {"area", b.w() * b.h()},
                                    {"iscrowd", 0}});
    }
  }
  if (voc) {
    fs::create_directories(root / "ImageSets" / "Main");
    write_text(root / "ImageSets" / "Main" / "train.txt", train_ids);
    write_text(root / "ImageSets" / "Main" / "val.txt", val_ids);
  } else {
    write_text(ann_dir / "instances_train.json", coco[0].dump());
    write_text(ann_dir / "instances_val.json", coco[1].dump());
  }
  return total;
}

}  // namespace netspec::data
