// Synthetic segmentation sets (see synth.h). pets: n JPEG images of random size (96-160 px a
// side), each a smooth textured background with one "pet": a star-shaped blob whose radius
// r(θ) = r0·(1 + Σ_k a_k cos(kθ + φ_k)) carries its own striped/spotted texture and colour. The
// trimap marks pixels with |ρ - r(θ)| < band as border (3), inside as pet (1), the rest as
// background (2); band = 3.5 % of the shorter side. 80 % of the names go to trainval.txt.
// brats: n MSD Task01 cases (240 x 240 x 8 x 4 float32 images, uint8 labels, dataset.json): an
// elliptic "brain" with per-modality intensity and texture, and a tumour of nested shells
// (enhancing ring 3 around a non-enhancing core 2, inside edema 1) whose radius varies over z;
// FLAIR and T2 are bright on edema, T1gd on the enhancing ring, T1w dark on the tumour.
#include <fmt/format.h>
#include <nifti1_io.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <random>
#include <vector>

#include "core/error.h"
#include "data/image_write.h"
#include "data/synth.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

struct Rgb {
  double r, g, b;
};

Rgb random_colour(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(20, 235);
  return {u(rng), u(rng), u(rng)};
}

double dist(const Rgb& a, const Rgb& b) {
  return std::sqrt((a.r - b.r) * (a.r - b.r) + (a.g - b.g) * (a.g - b.g) +
                   (a.b - b.b) * (a.b - b.b));
}

// One image and its trimap.
void pets_sample(std::mt19937_64& rng, const fs::path& dir, const std::string& name) {
  std::uniform_real_distribution<double> u(0, 1);
  const auto h = static_cast<int64_t>(96 + u(rng) * 64), w = static_cast<int64_t>(96 + u(rng) * 64);
  const double side = double(std::min(h, w));
  const Rgb bg = random_colour(rng);
  Rgb fg = random_colour(rng);
  while (dist(bg, fg) < 90) fg = random_colour(rng);
  const Rgb fg2{fg.r * 0.6, fg.g * 0.6, fg.b * 0.6};
  // Background: two low-frequency waves; pet: stripes or spots at a higher frequency.
  const double bfx = u(rng) * 0.08, bfy = u(rng) * 0.08, bph = u(rng) * 6.28;
  const bool stripes = u(rng) < 0.5;
  const double pf = 0.25 + u(rng) * 0.35, pang = u(rng) * std::numbers::pi;
  const double cx = w * (0.35 + 0.3 * u(rng)), cy = h * (0.35 + 0.3 * u(rng));
  const double r0 = side * (0.18 + 0.12 * u(rng)), band = 0.035 * side;
  double amp[3], ph[3];
  for (int k = 0; k < 3; ++k) {
    amp[k] = u(rng) * 0.12;
    ph[k] = u(rng) * 6.28;
  }
  std::normal_distribution<double> noise(0, 6);
  Tensor img(DType::kUI8, {3, h, w}), tri(DType::kUI8, {h, w});
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const double dx = double(x) + 0.5 - cx, dy = double(y) + 0.5 - cy;
      const double rho = std::hypot(dx, dy), th = std::atan2(dy, dx);
      double r = 1;
      for (int k = 0; k < 3; ++k) r += amp[k] * std::cos((k + 2) * th + ph[k]);
      r *= r0;
      const bool inside = rho < r;
      tri.data<uint8_t>()[y * w + x] = std::abs(rho - r) < band ? 3 : inside ? 1 : 2;
      Rgb c;
      if (inside) {
        const double t = stripes ? std::sin(pf * (dx * std::cos(pang) + dy * std::sin(pang)))
                                 : std::sin(pf * dx) * std::sin(pf * dy);
        const double a = 0.5 + 0.5 * t;
        c = {fg.r * a + fg2.r * (1 - a), fg.g * a + fg2.g * (1 - a), fg.b * a + fg2.b * (1 - a)};
      } else {
        const double t = 0.85 + 0.15 * std::sin(bfx * double(x) + bfy * double(y) + bph);
        c = {bg.r * t, bg.g * t, bg.b * t};
      }
      const double v[3] = {c.r, c.g, c.b};
      for (int ch = 0; ch < 3; ++ch)
        img.data<uint8_t>()[(ch * h + y) * w + x] =
            static_cast<uint8_t>(std::clamp(v[ch] + noise(rng), 0.0, 255.0));
    }
  write_jpeg((dir / "images" / (name + ".jpg")).string(), img);
  write_png_gray((dir / "annotations" / "trimaps" / (name + ".png")).string(), tri);
}

void synth_pets(const SynthOptions& o) {
  const fs::path dir(o.out);
  fs::create_directories(dir / "images");
  fs::create_directories(dir / "annotations" / "trimaps");
  std::ofstream trainval(dir / "annotations" / "trainval.txt"),
      test(dir / "annotations" / "test.txt"), all(dir / "annotations" / "list.txt");
  if (!trainval || !test || !all) fail("synth", "{}: cannot write the split lists", o.out);
  all << "#Image CLASS-ID SPECIES BREED ID\n";
  const int64_t n_train = std::max<int64_t>(1, o.n * 4 / 5);
  for (int64_t i = 0; i < o.n; ++i) {
    std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i));
    const std::string name = fmt::format("synth_{:05d}", i + 1);
    pets_sample(rng, dir, name);
    const std::string line = fmt::format("{} 1 1 1\n", name);
    (i < n_train ? trainval : test) << line;
    all << line;
  }
}

// Writes a 3D/4D float32 or uint8 NIfTI-1 volume (gzip-compressed when path ends in .gz).
void write_nifti(const std::string& path, const std::vector<int>& dims, int datatype,
                 const void* data, size_t bytes) {
  int d[8] = {int(dims.size()), 1, 1, 1, 1, 1, 1, 1};
  for (size_t i = 0; i < dims.size(); ++i) d[i + 1] = dims[i];
  nifti_image* nim = nifti_make_new_nim(d, datatype, 1);  // 1: allocate the data
  if (!nim || !nim->data || nifti_set_filenames(nim, path.c_str(), 0, 1) != 0)
    fail("synth", "{}: cannot set up the NIfTI image", path);
  std::memcpy(nim->data, data, bytes);
  nifti_image_write(nim);
  nifti_image_free(nim);
  if (!fs::is_regular_file(path)) fail("synth", "{}: NIfTI write failed", path);
}

void brats_case(std::mt19937_64& rng, const fs::path& dir, const std::string& name) {
  constexpr int kX = 240, kY = 240, kZ = 8;
  constexpr int64_t kPlane = int64_t{kX} * kY, kVol = kPlane * kZ;
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(0, 1);
  const double bx = 120 + 10 * (u(rng) - 0.5), by = 120 + 10 * (u(rng) - 0.5);
  const double ax = 70 + 15 * u(rng), ay = 85 + 15 * u(rng);
  const double tr = 14 + 14 * u(rng), ta = u(rng) * 6.28, td = 0.25 + 0.35 * u(rng);
  const double tx = bx + td * ax * std::cos(ta), ty = by + td * ay * std::sin(ta);
  const double base[4] = {300, 500, 550, 400}, tex = 0.04 + 0.04 * u(rng);
  // Intensity factor per modality and class (background of the brain, edema, core, ring).
  const double gain[4][4] = {
      {1, 1.8, 1.2, 1.3}, {1, 0.9, 0.6, 0.7}, {1, 1.0, 0.8, 2.0}, {1, 1.6, 1.5, 1.4}};
  std::vector<float> img(size_t(4 * kVol), 0.f);
  std::vector<uint8_t> lab(size_t(kVol), 0);
  for (int z = 0; z < kZ; ++z) {
    const double zf = 1 - std::pow((z - (kZ - 1) / 2.0) / kZ, 2) * 1.5;  // smaller at the ends
    const double rt = tr * (0.6 + 0.4 * std::sin(3.14 * (z + 1) / (kZ + 1)));
    for (int y = 0; y < kY; ++y)
      for (int x = 0; x < kX; ++x) {
        const double ex = (x - bx) / (ax * zf), ey = (y - by) / (ay * zf);
        if (ex * ex + ey * ey >= 1) continue;
        const double d = std::hypot(x - tx, y - ty) / rt;
        const int cls = d < 0.6 ? 2 : d < 1.0 ? 3 : d < 1.7 ? 1 : 0;
        const int64_t i = z * kPlane + int64_t{y} * kX + x;
        lab[size_t(i)] = uint8_t(cls);
        const double t = 1 + 0.15 * std::sin(tex * x) * std::cos(tex * y);
        for (int m = 0; m < 4; ++m)
          img[size_t(m * kVol + i)] =
              float(std::max(1.0, base[m] * gain[m][cls] * t + 15 * noise(rng)));
      }
  }
  write_nifti((dir / "imagesTr" / (name + ".nii.gz")).string(), {kX, kY, kZ, 4}, DT_FLOAT32,
              img.data(), img.size() * sizeof(float));
  write_nifti((dir / "labelsTr" / (name + ".nii.gz")).string(), {kX, kY, kZ}, DT_UINT8, lab.data(),
              lab.size());
}

void synth_brats(const SynthOptions& o) {
  const fs::path dir(o.out);
  fs::create_directories(dir / "imagesTr");
  fs::create_directories(dir / "labelsTr");
  nlohmann::ordered_json j;
  j["name"] = "BRATS";
  j["description"] = "netspec synthetic stand-in for MSD Task01_BrainTumour";
  j["modality"] = {{"0", "FLAIR"}, {"1", "T1w"}, {"2", "t1gd"}, {"3", "T2w"}};
  j["labels"] = {
      {"0", "background"}, {"1", "edema"}, {"2", "non-enhancing tumor"}, {"3", "enhancing tumour"}};
  j["numTraining"] = o.n;
  j["training"] = nlohmann::json::array();
  for (int64_t i = 0; i < o.n; ++i) {
    std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i));
    const std::string name = fmt::format("BRATS_{:03d}", i + 1);
    brats_case(rng, dir, name);
    j["training"].push_back(
        {{"image", "./imagesTr/" + name + ".nii.gz"}, {"label", "./labelsTr/" + name + ".nii.gz"}});
  }
  std::ofstream f(dir / "dataset.json");
  f << j.dump(4) << "\n";
  if (!f) fail("synth", "{}: cannot write dataset.json", o.out);
}

}  // namespace

void synth_seg(const SynthOptions& o) {
  if (o.n < 2) fail("synth", "--n must be >= 2 (got {}): one train and one test sample", o.n);
  if (o.format == "pets") return synth_pets(o);
  if (o.format == "brats") return synth_brats(o);
  fail("synth", "seg --format {}: unknown (expected pets or brats)", o.format);
}

}  // namespace netspec::data
