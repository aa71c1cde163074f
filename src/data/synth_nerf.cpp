// The procedural radiance field (radiance_field.h) written as a folder in the NeRF
// transforms.json layout: DIR/train/r_<k>.png, DIR/test/r_<k>.png (RGB, rendered exactly over a
// white background and rounded to 8 bits), DIR/transforms_train.json and transforms_test.json
// with camera_angle_x and each frame's file_path and camera-to-world transform_matrix.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_check.h"
#include "data/image_write.h"
#include "data/radiance_field.h"
#include "data/synth.h"

namespace netspec::data {

void synth_nerf(const SynthOptions& o, int64_t size) {
  namespace fs = std::filesystem;
  if (o.n < 1) fail("synth", "nerf --n {}: the number of training views must be >= 1", o.n);
  if (size < 1) fail("synth", "nerf --size {}: must be >= 1", size);
  ProceduralViews v;
  v.train = o.n, v.size = size;
  for (const bool test : {false, true}) {
    const std::string split = test ? "test" : "train";
    fs::create_directories(fs::path(o.out) / split);
    nlohmann::ordered_json j;
    j["camera_angle_x"] = v.angle_x;
    j["frames"] = nlohmann::json::array();
    const std::vector<Camera> cams = procedural_cameras(v, test);
    for (size_t k = 0; k < cams.size(); ++k) {
      const Tensor rays = camera_rays(cams[k], size, size);
      Tensor img(DType::kUI8, {3, size, size});
      for (int64_t i = 0; i < size * size; ++i) {
        const float* r = rays.data<float>() + i * 6;
        const Vec3 c =
            render_exact(procedural_scene(), {r[0], r[1], r[2]}, {r[3], r[4], r[5]}, 2, 6, 1);
        for (int ch = 0; ch < 3; ++ch)
          img.data<uint8_t>()[ch * size * size + i] =
              uint8_t(std::lround(std::clamp(c[size_t(ch)], 0.0, 1.0) * 255));
      }
      const std::string rel = fmt::format("./{}/r_{}", split, k);
      write_png_rgb((fs::path(o.out) / (rel + ".png")).string(), img);
      j["frames"].push_back({{"file_path", rel}, {"transform_matrix", cams[k].c2w}});
    }
    write_file_atomic((fs::path(o.out) / ("transforms_" + split + ".json")).string(),
                      j.dump(2) + "\n");
  }
}

}  // namespace netspec::data
