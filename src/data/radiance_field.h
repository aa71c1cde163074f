// Radiance-field data (the `radianceField` dataset, the nerf task's): posed views cut into rays.
// A sample is one camera ray, x = (origin xyz, unit direction xyz) f32 [6], y = its pixel's
// colour f32 [3] in [0, 1]; rays are view-major, row-major within a view. Cameras follow the
// NeRF / Blender convention: c2w = transform_matrix, the camera looks along its -z with +y up,
// focal = 0.5·W / tan(0.5·camera_angle_x), and pixel (i, j) (column, row) has the direction
// c2w_rot · ((i + 0.5 - W/2) / f, -(j + 0.5 - H/2) / f, -1), normalised (so ray distances, and
// nerfNear / nerfFar, are Euclidean).
// Two sources: a procedural scene netspec generates (three spheres and a box of constant
// density and colour, rendered exactly: the medium is piecewise constant along a ray), or a
// folder in the common NeRF transforms.json layout (radiance_field_folder.cpp).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "data/datasets.h"

namespace netspec::data {

using Vec3 = std::array<double, 3>;
using Pose = std::array<std::array<double, 4>, 4>;  // camera-to-world, row-major

// The layout of a split's rays: `views` images of height x width, one after the other.
struct RayViews {
  int64_t height = 0, width = 0;
  int64_t train_views = 0, test_views = 0;
  std::string source;  // "procedural scene" or the folder
};

// A camera: pose and horizontal field of view (radians).
struct Camera {
  Pose c2w{};
  double angle_x = 0;
};

// Rays f32 [H·W, 6] (origin, unit direction) of one camera, row-major over the pixels.
Tensor camera_rays(const Camera& cam, int64_t height, int64_t width);
// A camera at `eye` looking at `target` with world up +z (the Blender convention).
Camera look_at(const Vec3& eye, const Vec3& target, double angle_x);

// A shape of the procedural scene: a sphere (half = radius) or an axis-aligned box (half-size
// in every axis) of constant density sigma and colour rgb.
struct Blob {
  bool box = false;
  Vec3 centre{};
  double half = 0;
  Vec3 rgb{};
  double sigma = 0;
};
struct Scene {
  std::vector<Blob> blobs;
};
// The scene netspec generates (fixed; inside the unit ball around the origin).
const Scene& procedural_scene();
// The exact volume rendering of `scene` along origin + t·dir (dir unit) over t in [near, far]:
// between consecutive shape boundaries the density is the sum σ of the shapes there and the
// colour their σ-weighted mean, so C = Σ_k T_k (1 - e^{-σ_k L_k}) c_k + T_end·bg with
// T_k = exp(-Σ_{m<k} σ_m L_m).
Vec3 render_exact(const Scene& scene, const Vec3& origin, const Vec3& dir, double near, double far,
                  double background);

// The procedural dataset's cameras: `train` views on a spiral over the upper hemisphere and
// `test` views between them, at distance 4 from the origin, each `size` x `size` pixels.
struct ProceduralViews {
  int64_t size = 32, train = 30, test = 4;
  double angle_x = 0.6911;  // the Blender scenes' field of view
};
std::vector<Camera> procedural_cameras(const ProceduralViews& v, bool test);
// The procedural scene's splits (limit > 0: that many training rays, evenly strided).
Splits load_procedural_field(const ProceduralViews& v, double near, double far, double background,
                             int64_t limit);
// limit > 0: keep `limit` rays of ds evenly strided over it (every view keeps some).
void keep_strided(Dataset& ds, int64_t limit);
// A folder in the transforms.json layout (radiance_field_folder.cpp).
Splits load_transforms_folder(const std::string& dir, double background, int64_t limit);

}  // namespace netspec::data
