// A folder of posed images in the common NeRF layout (the Blender "nerf_synthetic" scenes,
// nerf-pytorch's load_blender): DIR/transforms_train.json and DIR/transforms_test.json (else
// transforms_val.json), each {"camera_angle_x": rad, "frames": [{"file_path": "./train/r_0",
// "transform_matrix": 4x4 camera-to-world}, ...]}. file_path is relative to DIR, with ".png"
// appended when the path itself is no file. RGBA images are composited over the background grey
// (nerf-pytorch's white_bkgd for background 1). Every field is checked; an error names the file
// and the field (`[radiance-field] DIR/transforms_train.json: frames[3].transform_matrix ...`).
#include <cmath>
#include <filesystem>
#include <numbers>

#include "core/error.h"
#include "core/file_check.h"
#include "core/json_strict.h"
#include "data/image.h"
#include "data/radiance_field.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct View {
  Camera cam;
  std::string image;
};

Pose read_pose(const json& m, const std::string& file, const std::string& field) {
  auto bad = [&](const std::string& why) -> Pose {
    fail("radiance-field", "{}: {} {} (got {})", file, field, why, m.dump().substr(0, 120));
  };
  if (!m.is_array() || m.size() != 4) return bad("must be 4 rows of 4 numbers");
  Pose p{};
  for (size_t r = 0; r < 4; ++r) {
    if (!m[r].is_array() || m[r].size() != 4) return bad("must be 4 rows of 4 numbers");
    for (size_t c = 0; c < 4; ++c) {
      if (!m[r][c].is_number() || !std::isfinite(m[r][c].get<double>()))
        return bad("must hold finite numbers only");
      p[r][c] = m[r][c].get<double>();
    }
  }
  const double last[4] = {0, 0, 0, 1};
  for (int c = 0; c < 4; ++c)
    if (std::abs(p[3][c] - last[c]) > 1e-6) return bad("must end in the row [0, 0, 0, 1]");
  for (int a = 0; a < 3; ++a)  // rotation columns orthonormal: cameras are rigid
    for (int b = 0; b < 3; ++b) {
      double dot = 0;
      for (int k = 0; k < 3; ++k) dot += p[k][a] * p[k][b];
      if (std::abs(dot - (a == b ? 1 : 0)) > 1e-3)
        return bad("must have an orthonormal rotation (its first 3 columns)");
    }
  return p;
}

std::vector<View> read_transforms(const std::string& dir, const std::string& file) {
  const std::string text = read_regular_file("radiance-field", file);
  const json j = parse_json_strict<json>(text, file);
  if (!j.is_object()) fail("radiance-field", "{}: the top level must be an object", file);
  if (!j.contains("camera_angle_x"))
    fail("radiance-field", "{}: camera_angle_x is missing (the horizontal field of view)", file);
  const json& ax = j["camera_angle_x"];
  if (!ax.is_number() || !(ax.get<double>() > 0 && ax.get<double>() < std::numbers::pi))
    fail("radiance-field", "{}: camera_angle_x must be a number of radians in (0, pi) (got {})",
         file, ax.dump());
  if (!j.contains("frames") || !j["frames"].is_array() || j["frames"].empty())
    fail("radiance-field", "{}: frames must be a non-empty array of posed images", file);
  std::vector<View> views;
  for (size_t i = 0; i < j["frames"].size(); ++i) {
    const json& f = j["frames"][i];
    const std::string at = fmt::format("frames[{}]", i);
    if (!f.is_object()) fail("radiance-field", "{}: {} must be an object", file, at);
    if (!f.contains("file_path") || !f["file_path"].is_string() ||
        f["file_path"].get<std::string>().empty())
      fail("radiance-field", "{}: {}.file_path must be a non-empty string", file, at);
    if (!f.contains("transform_matrix"))
      fail("radiance-field", "{}: {}.transform_matrix is missing", file, at);
    const std::string rel = f["file_path"].get<std::string>();
    fs::path p = fs::path(dir) / rel;
    if (!fs::is_regular_file(p) && fs::is_regular_file(fs::path(p.string() + ".png")))
      p = p.string() + ".png";
    if (!fs::is_regular_file(p))
      fail("radiance-field", "{}: {}.file_path '{}': no such image ({} nor {}.png)", file, at, rel,
           p.string(), p.string());
    View v;
    v.cam.c2w = read_pose(f["transform_matrix"], file, at + ".transform_matrix");
    v.cam.angle_x = ax.get<double>();
    v.image = p.string();
    views.push_back(std::move(v));
  }
  return views;
}

// Every view's rays and composited colours; all images must share one size.
Dataset rays_of(const std::vector<View>& views, const std::string& file, double bg,
                int64_t& height, int64_t& width) {
  std::vector<Tensor> images;
  for (const View& v : views) {
    Tensor img = decode_image_rgba(v.image);
    const int64_t h = img.shape()[1], w = img.shape()[2];
    if (height == 0) height = h, width = w;
    if (h != height || w != width)
      fail("radiance-field", "{}: {} is {}x{}, the scene's other images {}x{} (one size only)",
           file, v.image, w, h, width, height);
    images.push_back(std::move(img));
  }
  const int64_t per = height * width, n = per * int64_t(views.size());
  Dataset ds(Tensor(DType::kF32, {n, 6}), Tensor(DType::kF32, {n, 3}));
  for (size_t k = 0; k < views.size(); ++k) {
    const Tensor r = camera_rays(views[k].cam, height, width);
    std::copy_n(r.data<float>(), per * 6, ds.x.data<float>() + int64_t(k) * per * 6);
    const uint8_t* px = images[k].data<uint8_t>();
    float* y = ds.y.data<float>() + int64_t(k) * per * 3;
    for (int64_t i = 0; i < per; ++i) {
      const double a = px[3 * per + i] / 255.0;  // straight alpha over the background
      for (int c = 0; c < 3; ++c) y[i * 3 + c] = float(px[c * per + i] / 255.0 * a + bg * (1 - a));
    }
  }
  return ds;
}

}  // namespace

Splits load_transforms_folder(const std::string& dir, double background, int64_t limit) {
  if (!fs::is_directory(dir))
    fail("radiance-field", "{}: no such directory (expected transforms_train.json inside)", dir);
  const std::string train_file = (fs::path(dir) / "transforms_train.json").string();
  std::string test_file = (fs::path(dir) / "transforms_test.json").string();
  if (!fs::exists(train_file))
    fail("radiance-field", "{}: no transforms_train.json (the NeRF layout: transforms_train.json, "
                           "transforms_test.json and the images they name)",
         dir);
  if (!fs::exists(test_file)) test_file = (fs::path(dir) / "transforms_val.json").string();
  if (!fs::exists(test_file))
    fail("radiance-field", "{}: no transforms_test.json or transforms_val.json (the held-out views)",
         dir);
  const std::vector<View> train = read_transforms(dir, train_file);
  const std::vector<View> test = read_transforms(dir, test_file);
  int64_t h = 0, w = 0;
  Splits s;
  s.train = rays_of(train, train_file, background, h, w);
  s.test = rays_of(test, test_file, background, h, w);
  keep_strided(s.train, limit);
  auto v = std::make_shared<RayViews>();
  v->height = h, v->width = w;
  v->train_views = int64_t(train.size()), v->test_views = int64_t(test.size());
  v->source = dir;
  s.views = std::move(v);
  return s;
}

}  // namespace netspec::data
