// Oxford-IIIT Pets segmentation reader (see pets.h).
#include "data/pets.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/thread_pool.h"
#include "data/image.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> read_list(const fs::path& p) {
  std::ifstream f(p);
  if (!f) fail("pets", "{}: no such file (expected the Oxford-IIIT Pets split list)", p.string());
  std::vector<std::string> names;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name;
    ss >> name;
    if (!name.empty()) names.push_back(name);
  }
  if (names.empty()) fail("pets", "{}: no samples listed", p.string());
  return names;
}

}  // namespace

Tensor resize_mask_nearest(const Tensor& mask, int64_t height, int64_t width) {
  const int64_t ih = mask.shape()[0], iw = mask.shape()[1];
  const CoverCrop g = cover_crop(ih, iw, height, width);
  Tensor out(DType::kI32, {height, width});
  auto src = [](int64_t i, int64_t in, int64_t resized) {
    return std::min(in - 1, static_cast<int64_t>((double(i) + 0.5) * double(in) / double(resized)));
  };
  for (int64_t y = 0; y < height; ++y) {
    const int64_t sy = src(y + g.top, ih, g.rh);
    for (int64_t x = 0; x < width; ++x)
      out.data<int32_t>()[y * width + x] =
          mask.data<uint8_t>()[sy * iw + src(x + g.left, iw, g.rw)];
  }
  return out;
}

PetsSplit load_pets_split(const std::string& dir, const std::string& list, int64_t height,
                          int64_t width, int64_t limit) {
  if (height < 1 || width < 1)
    fail("pets", "needs the net's input size (got {}x{})", height, width);
  const fs::path root(dir);
  PetsSplit out;
  out.names = read_list(root / "annotations" / (list + ".txt"));
  if (limit > 0 && limit < static_cast<int64_t>(out.names.size())) out.names.resize(size_t(limit));
  const auto n = static_cast<int64_t>(out.names.size());
  out.ds = Dataset(Tensor(DType::kUI8, {n, 3, height, width}),
                   Tensor(DType::kI32, {n, height, width}), kImageNetNorm.mean, kImageNetNorm.std);
  const int64_t px = height * width;
  ThreadPool::global().parallel_for(n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const std::string& name = out.names[size_t(i)];
      Tensor img = resize_center_crop(decode_image((root / "images" / (name + ".jpg")).string()),
                                      height, width);
      std::memcpy(out.ds.x.data<uint8_t>() + i * 3 * px, img.data<uint8_t>(), size_t(3 * px));
      const std::string tp = (root / "annotations" / "trimaps" / (name + ".png")).string();
      Tensor tri = decode_image(tp);  // gray replicated to RGB: channel 0 holds the value
      Tensor m(DType::kUI8, {tri.shape()[1], tri.shape()[2]});
      std::memcpy(m.data<uint8_t>(), tri.data<uint8_t>(), size_t(m.numel()));
      for (int64_t k = 0; k < m.numel(); ++k) {
        uint8_t& v = m.data<uint8_t>()[k];
        if (v < 1 || v > 3) fail("pets", "{}: trimap value {} (expected 1, 2 or 3)", tp, int(v));
        v = v == 2 ? 0 : v == 1 ? 1 : 2;  // background 0, pet 1, border 2
      }
      Tensor r = resize_mask_nearest(m, height, width);
      std::memcpy(out.ds.y.data<int32_t>() + i * px, r.data<int32_t>(), size_t(px) * 4);
    }
  });
  return out;
}

}  // namespace netspec::data
