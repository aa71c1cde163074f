// Cameras, rays and the procedural radiance field (see radiance_field.h).
#include "data/radiance_field.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"

namespace netspec::data {
namespace {

Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Vec3 unit(const Vec3& a) {
  const double n = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  return {a[0] / n, a[1] / n, a[2] / n};
}

// The [enter, exit] distances of the ray inside `b` (enter > exit: missed).
std::pair<double, double> hit(const Blob& b, const Vec3& o, const Vec3& d) {
  const Vec3 oc = sub(o, b.centre);
  if (!b.box) {  // |oc + t·d|² = r² with |d| = 1: t = -oc·d ± √((oc·d)² - |oc|² + r²)
    const double p = oc[0] * d[0] + oc[1] * d[1] + oc[2] * d[2];
    const double q = oc[0] * oc[0] + oc[1] * oc[1] + oc[2] * oc[2] - b.half * b.half;
    const double disc = p * p - q;
    if (disc <= 0) return {1, 0};
    return {-p - std::sqrt(disc), -p + std::sqrt(disc)};
  }
  double lo = -INFINITY, hi = INFINITY;  // slabs: the intersection of three intervals
  for (int k = 0; k < 3; ++k) {
    if (d[k] == 0) {
      if (std::abs(oc[k]) > b.half) return {1, 0};
      continue;
    }
    double a = (-b.half - oc[k]) / d[k], c = (b.half - oc[k]) / d[k];
    if (a > c) std::swap(a, c);
    lo = std::max(lo, a), hi = std::min(hi, c);
  }
  return {lo, hi};
}

bool inside(const Blob& b, const Vec3& p) {
  const Vec3 q = sub(p, b.centre);
  if (b.box) return std::max({std::abs(q[0]), std::abs(q[1]), std::abs(q[2])}) <= b.half;
  return q[0] * q[0] + q[1] * q[1] + q[2] * q[2] <= b.half * b.half;
}

}  // namespace

Camera look_at(const Vec3& eye, const Vec3& target, double angle_x) {
  const Vec3 f = unit(sub(target, eye));  // forward: the camera's -z
  const Vec3 r = unit(cross(f, {0, 0, 1}));
  const Vec3 u = cross(r, f);
  Camera c;
  c.angle_x = angle_x;
  for (int k = 0; k < 3; ++k) c.c2w[k] = {r[k], u[k], -f[k], eye[k]};
  c.c2w[3] = {0, 0, 0, 1};
  return c;
}

Tensor camera_rays(const Camera& cam, int64_t height, int64_t width) {
  const double focal = 0.5 * double(width) / std::tan(0.5 * cam.angle_x);
  Tensor t(DType::kF32, {height * width, 6});
  float* o = t.data<float>();
  const Pose& m = cam.c2w;
  for (int64_t j = 0; j < height; ++j)
    for (int64_t i = 0; i < width; ++i, o += 6) {
      const Vec3 dc = {(double(i) + 0.5 - 0.5 * double(width)) / focal,
                       -(double(j) + 0.5 - 0.5 * double(height)) / focal, -1.0};
      Vec3 d{};
      for (int k = 0; k < 3; ++k) d[k] = m[k][0] * dc[0] + m[k][1] * dc[1] + m[k][2] * dc[2];
      d = unit(d);
      for (int k = 0; k < 3; ++k) o[k] = float(m[k][3]), o[3 + k] = float(d[k]);
    }
  return t;
}

const Scene& procedural_scene() {
  static const Scene kScene{{
      {false, {-0.45, -0.1, 0.05}, 0.42, {0.85, 0.15, 0.1}, 12.0},  // opaque red sphere
      {false, {0.45, 0.3, -0.1}, 0.35, {0.1, 0.7, 0.25}, 12.0},     // opaque green sphere
      {false, {0.15, -0.45, 0.4}, 0.3, {0.15, 0.3, 0.95}, 2.5},     // translucent blue sphere
      {true, {0.2, 0.15, -0.45}, 0.25, {0.95, 0.8, 0.1}, 12.0},     // yellow box below
  }};
  return kScene;
}

Vec3 render_exact(const Scene& scene, const Vec3& o, const Vec3& d, double near, double far,
                  double background) {
  std::vector<double> cuts = {near, far};
  for (const Blob& b : scene.blobs) {
    const auto [a, c] = hit(b, o, d);
    for (double t : {a, c})
      if (a < c && t > near && t < far) cuts.push_back(t);
  }
  std::sort(cuts.begin(), cuts.end());
  Vec3 color{0, 0, 0};
  double trans = 1;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    const double len = cuts[k + 1] - cuts[k], mid = 0.5 * (cuts[k] + cuts[k + 1]);
    const Vec3 p = {o[0] + mid * d[0], o[1] + mid * d[1], o[2] + mid * d[2]};
    double sigma = 0;
    Vec3 c{0, 0, 0};
    for (const Blob& b : scene.blobs)
      if (inside(b, p)) {
        sigma += b.sigma;
        for (int i = 0; i < 3; ++i) c[i] += b.sigma * b.rgb[i];
      }
    if (sigma <= 0 || len <= 0) continue;
    const double a = -std::expm1(-sigma * len);  // this segment's opacity
    for (int i = 0; i < 3; ++i) color[i] += trans * a * c[i] / sigma;
    trans *= 1 - a;
  }
  for (int i = 0; i < 3; ++i) color[i] += trans * background;
  return color;
}

std::vector<Camera> procedural_cameras(const ProceduralViews& v, bool test) {
  // Train: azimuth by the golden angle, elevation 10°..60° up the spiral; test: azimuths
  // halfway between the first training views, elevation 30°.
  std::vector<Camera> cams;
  const int64_t n = test ? v.test : v.train;
  const double golden = std::numbers::pi * (3 - std::sqrt(5.0));
  for (int64_t k = 0; k < n; ++k) {
    const double az = test ? 2 * std::numbers::pi * (double(k) + 0.5) / double(n) : golden * double(k);
    const double el =
        (test ? 30.0 : 10.0 + 50.0 * double(k) / double(std::max<int64_t>(n - 1, 1))) *
        std::numbers::pi / 180;
    const Vec3 eye = {4 * std::cos(el) * std::cos(az), 4 * std::cos(el) * std::sin(az),
                      4 * std::sin(el)};
    cams.push_back(look_at(eye, {0, 0, 0}, v.angle_x));
  }
  return cams;
}

void keep_strided(Dataset& ds, int64_t limit) {
  if (limit <= 0 || limit >= ds.size()) return;
  std::vector<int64_t> rows;  // sample floor((2i + 1)·n / 2·limit)
  for (int64_t i = 0; i < limit; ++i) rows.push_back((2 * i + 1) * ds.size() / (2 * limit));
  ds = take_rows(ds, rows);
}

Splits load_procedural_field(const ProceduralViews& v, double near, double far, double background,
                             int64_t limit) {
  auto split = [&](bool test) {
    const std::vector<Camera> cams = procedural_cameras(v, test);
    const int64_t per = v.size * v.size, n = per * int64_t(cams.size());
    Dataset ds(Tensor(DType::kF32, {n, 6}), Tensor(DType::kF32, {n, 3}));
    for (size_t c = 0; c < cams.size(); ++c) {
      const Tensor r = camera_rays(cams[c], v.size, v.size);
      std::copy_n(r.data<float>(), per * 6, ds.x.data<float>() + int64_t(c) * per * 6);
    }
    const float* x = ds.x.data<float>();
    float* y = ds.y.data<float>();
    for (int64_t i = 0; i < n; ++i) {
      const float* r = x + i * 6;
      const Vec3 col = render_exact(procedural_scene(), {r[0], r[1], r[2]}, {r[3], r[4], r[5]},
                                    near, far, background);
      for (int k = 0; k < 3; ++k) y[i * 3 + k] = float(col[k]);
    }
    return ds;
  };
  Splits s;
  s.train = split(false);
  s.test = split(true);
  keep_strided(s.train, limit);
  auto views = std::make_shared<RayViews>();
  views->height = views->width = v.size;
  views->train_views = v.train;
  views->test_views = v.test;
  views->source = "procedural scene";
  s.views = std::move(views);
  return s;
}

}  // namespace netspec::data
