// Synthetic segmentation sets (see synth.h). pets: n JPEG images of random size (96-160 px a
// side), each a smooth textured background with one "pet": a star-shaped blob whose radius
// r(θ) = r0·(1 + Σ_k a_k cos(kθ + φ_k)) carries its own striped/spotted texture and colour. The
// trimap marks pixels with |ρ - r(θ)| < band as border (3), inside as pet (1), the rest as
// background (2); band = 3.5 % of the shorter side. 80 % of the names go to trainval.txt.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <random>

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

}  // namespace

void synth_seg(const SynthOptions& o) {
  if (o.n < 2) fail("synth", "--n must be >= 2 (got {}): one train and one test sample", o.n);
  if (o.format == "pets") return synth_pets(o);
  fail("synth", "seg --format {}: unknown (expected pets)", o.format);
}

}  // namespace netspec::data
