// BraTS / MSD Task01 reader (see brats.h).
#include "data/brats.h"

#include <nifti1_io.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

// A whole NIfTI-1 volume as doubles (scl_slope / scl_inter applied), x fastest.
struct Volume {
  std::vector<int64_t> dims;  // nx, ny, nz, nt
  std::vector<double> v;
};

Volume read_volume(const std::string& path) {
  if (!fs::is_regular_file(path)) fail("brats", "{}: no such file", path);
  std::unique_ptr<nifti_image, void (*)(nifti_image*)> nim(nifti_image_read(path.c_str(), 1),
                                                           nifti_image_free);
  if (!nim || !nim->data) fail("brats", "{}: not a readable NIfTI-1 image", path);
  Volume out;
  out.dims = {nim->nx, nim->ny, std::max(nim->nz, 1), std::max(nim->nt, 1)};
  const size_t n = nim->nvox;
  out.v.resize(n);
  auto copy = [&](const auto* p) {
    for (size_t i = 0; i < n; ++i) out.v[i] = static_cast<double>(p[i]);
  };
  switch (nim->datatype) {
    case DT_UINT8:
      copy(static_cast<const uint8_t*>(nim->data));
      break;
    case DT_INT16:
      copy(static_cast<const int16_t*>(nim->data));
      break;
    case DT_UINT16:
      copy(static_cast<const uint16_t*>(nim->data));
      break;
    case DT_INT32:
      copy(static_cast<const int32_t*>(nim->data));
      break;
    case DT_FLOAT32:
      copy(static_cast<const float*>(nim->data));
      break;
    case DT_FLOAT64:
      copy(static_cast<const double*>(nim->data));
      break;
    default:
      fail("brats",
           "{}: NIfTI datatype {} not supported (expected uint8, int16, uint16, int32, "
           "float32 or float64)",
           path, nim->datatype);
  }
  if (nim->scl_slope != 0 && std::isfinite(nim->scl_slope))
    for (double& x : out.v) x = x * nim->scl_slope + nim->scl_inter;
  return out;
}

// Appends the brain slices of one case to xs (f32 [4, H, W] each) and ys (i32 [H, W] each).
void add_case(const std::string& img_path, const std::string& lab_path, int64_t height,
              int64_t width, std::vector<float>& xs, std::vector<int32_t>& ys) {
  Volume img = read_volume(img_path), lab = read_volume(lab_path);
  const int64_t nx = img.dims[0], ny = img.dims[1], nz = img.dims[2];
  if (img.dims[3] != 4)
    fail("brats", "{}: {} modalities (expected 4: FLAIR, T1w, T1gd, T2w)", img_path, img.dims[3]);
  if (lab.dims[0] != nx || lab.dims[1] != ny || lab.dims[2] != nz || lab.dims[3] != 1)
    fail("brats", "{}: label volume [{}] does not match the image's [{}, {}, {}]", lab_path,
         fmt::join(lab.dims, ", "), nx, ny, nz);
  if (nx < width || ny < height)
    fail("brats", "{}: slices {}x{} are smaller than the net's input {}x{}", img_path, ny, nx,
         height, width);
  const int64_t plane = nx * ny, vol = plane * nz;
  std::vector<uint8_t> brain(size_t(vol), 0);
  for (int64_t i = 0; i < vol; ++i)
    for (int64_t m = 0; m < 4; ++m) brain[size_t(i)] |= img.v[size_t(m * vol + i)] != 0;
  for (int64_t m = 0; m < 4; ++m) {  // z-score over brain voxels, background 0
    double s = 0, s2 = 0, n = 0;
    for (int64_t i = 0; i < vol; ++i)
      if (brain[size_t(i)]) {
        const double x = img.v[size_t(m * vol + i)];
        s += x, s2 += x * x, n += 1;
      }
    const double mean = n > 0 ? s / n : 0,
                 sd = n > 1 ? std::sqrt(std::max(s2 / n - mean * mean, 0.0)) : 1;
    for (int64_t i = 0; i < vol; ++i) {
      double& x = img.v[size_t(m * vol + i)];
      x = brain[size_t(i)] ? (x - mean) / (sd > 0 ? sd : 1) : 0;
    }
  }
  const int64_t y0 = (ny - height) / 2, x0 = (nx - width) / 2;
  for (int64_t z = 0; z < nz; ++z) {
    bool any = false;
    for (int64_t i = 0; i < plane && !any; ++i) any = brain[size_t(z * plane + i)];
    if (!any) continue;
    for (int64_t m = 0; m < 4; ++m)
      for (int64_t y = 0; y < height; ++y)
        for (int64_t x = 0; x < width; ++x)
          xs.push_back(float(img.v[size_t(m * vol + z * plane + (y + y0) * nx + x + x0)]));
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < width; ++x) {
        const double l = lab.v[size_t(z * plane + (y + y0) * nx + x + x0)];
        if (l < 0 || l > 3 || l != std::floor(l))
          fail("brats", "{}: label {} (expected 0, 1, 2 or 3)", lab_path, l);
        ys.push_back(int32_t(l));
      }
  }
}

Dataset make(std::vector<float>& xs, std::vector<int32_t>& ys, int64_t height, int64_t width) {
  const int64_t n = static_cast<int64_t>(ys.size()) / (height * width);
  Dataset d(Tensor(DType::kF32, {n, 4, height, width}), Tensor(DType::kI32, {n, height, width}));
  std::memcpy(d.x.raw(), xs.data(), xs.size() * sizeof(float));
  std::memcpy(d.y.raw(), ys.data(), ys.size() * sizeof(int32_t));
  return d;
}

}  // namespace

BratsSplits load_brats(const std::string& dir, int64_t height, int64_t width, int64_t limit) {
  const fs::path root(dir);
  std::ifstream f(root / "dataset.json");
  if (!f)
    fail("brats", "{}: no such file (expected the MSD Task01_BrainTumour dataset.json)",
         (root / "dataset.json").string());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    fail("brats", "{}: {}", (root / "dataset.json").string(), e.what());
  }
  if (!j.contains("training") || !j["training"].is_array() || j["training"].empty())
    fail("brats", "{}: no \"training\" cases", (root / "dataset.json").string());
  std::vector<float> tx, vx;
  std::vector<int32_t> ty, vy;
  size_t i = 0;
  for (const auto& c : j["training"]) {
    const bool test = i++ % 5 == 4;
    if (!test && limit > 0 && int64_t(ty.size()) >= limit * height * width) continue;
    add_case((root / c.at("image").get<std::string>()).lexically_normal().string(),
             (root / c.at("label").get<std::string>()).lexically_normal().string(), height, width,
             test ? vx : tx, test ? vy : ty);
  }
  if (ty.empty() || vy.empty())
    fail("brats",
         "{}: {} cases give no training or no test slices (every 5th case is a test "
         "case: at least 5 are needed)",
         dir, i);
  BratsSplits s{make(tx, ty, height, width), make(vx, vy, height, width)};
  if (limit > 0 && s.train.size() > limit) s.train = take_first(s.train, limit);
  return s;
}

}  // namespace netspec::data
