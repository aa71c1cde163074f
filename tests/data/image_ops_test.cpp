// The RandAugment / AutoAugment op set (data/image_ops.h) against torchvision's functional ops on
// PIL images (Debian's torchvision 0.14 + PIL; image_ops_reference.py), on a fixed RGB and a fixed
// grey image: every output pixel within 1 level (PIL-level tolerance), and the count of pixels
// off by one reported.
#include "data/image_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>

#include "core/npy.h"
#include "core/process_env.h"
#include "data/data_test_util.h"

namespace netspec::data {
namespace {

Image8 pattern(int64_t c, int64_t h, int64_t w) {
  Image8 im{c, h, w, std::vector<uint8_t>(static_cast<size_t>(c * h * w))};
  uint64_t s = 12345;
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        const int v =
            static_cast<int>(40 + 6 * x + 4 * y + 30 * ch) + static_cast<int>(s >> 59) * 5;
        im.at(ch, y, x) = static_cast<uint8_t>(std::clamp(v, 0, 255));
      }
  return im;
}

TEST(ImageOpsReference, WithinOneLevelOfTorchvision) {
  export_openblas_coretype();
  if (std::system("/usr/bin/python3 -c 'import torchvision, PIL' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "needs /usr/bin/python3 with torchvision and PIL (python3-torchvision)";
  const std::string d = test::tmpdir("imgops");
  const std::vector<Image8> ims = {pattern(3, 19, 23), pattern(1, 40, 37)};
  for (size_t k = 0; k < ims.size(); ++k) {
    Tensor t(DType::kUI8, {ims[k].c, ims[k].h, ims[k].w});
    std::copy(ims[k].px.begin(), ims[k].px.end(), t.data<uint8_t>());
    write_npy(d + "/in" + std::to_string(k) + ".npy", t);
  }
  const std::string cmd = "/usr/bin/python3 " + std::string(NETSPEC_SOURCE_DIR) +
                          "/tests/data/image_ops_reference.py " + d;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::map<std::string, std::function<Image8(const Image8&)>> ops = {
      {"brightness_1.6", [](const Image8& i) { return brightness(i, 1.6); }},
      {"brightness_0.4", [](const Image8& i) { return brightness(i, 0.4); }},
      {"contrast_1.7", [](const Image8& i) { return contrast(i, 1.7); }},
      {"contrast_0.3", [](const Image8& i) { return contrast(i, 0.3); }},
      {"color_1.8", [](const Image8& i) { return color(i, 1.8); }},
      {"color_0.2", [](const Image8& i) { return color(i, 0.2); }},
      {"sharpness_1.9", [](const Image8& i) { return sharpness(i, 1.9); }},
      {"sharpness_0.1", [](const Image8& i) { return sharpness(i, 0.1); }},
      {"posterize_3", [](const Image8& i) { return posterize(i, 3); }},
      {"solarize_100", [](const Image8& i) { return solarize(i, 100); }},
      {"solarize_add_40", [](const Image8& i) { return solarize_add(i, 40); }},
      {"invert", [](const Image8& i) { return invert(i); }},
      {"autocontrast", [](const Image8& i) { return autocontrast(i); }},
      {"equalize", [](const Image8& i) { return equalize(i); }},
      {"rotate_30", [](const Image8& i) { return rotate(i, 30, 7); }},
      {"rotate_-17", [](const Image8& i) { return rotate(i, -17, 7); }},
      {"shear_x_0.31", [](const Image8& i) { return shear_x(i, 0.31, 7); }},
      {"shear_y_-0.23", [](const Image8& i) { return shear_y(i, -0.23, 7); }},
      {"translate_x_5", [](const Image8& i) { return translate_x(i, 5, 7); }},
      {"translate_y_-4", [](const Image8& i) { return translate_y(i, -4, 7); }},
  };
  for (size_t k = 0; k < ims.size(); ++k)
    for (const auto& [name, f] : ops) {
      Tensor ref = read_npy(d + "/out" + std::to_string(k) + "_" + name + ".npy");
      const Image8 mine = f(ims[k]);
      ASSERT_EQ(ref.numel(), static_cast<int64_t>(mine.px.size())) << name;
      int worst = 0;
      int64_t off = 0, changed = 0;
      for (int64_t i = 0; i < ref.numel(); ++i) {
        const int diff = std::abs(static_cast<int>(mine.px[i]) - ref.data<uint8_t>()[i]);
        worst = std::max(worst, diff);
        off += diff != 0;
        changed += ref.data<uint8_t>()[i] != ims[k].px[i];
      }
      EXPECT_LE(worst, 1) << name << " image " << k << " (" << off << " pixels differ)";
      if (ims[k].c == 3 || name.rfind("color", 0) != 0) {  // saturation leaves grey as it is
        EXPECT_GT(changed, 0) << name << " image " << k << ": the op changed nothing";
      }
      if (off)
        std::cout << "[ pil ] " << name << " image " << k << ": " << off << " of " << ref.numel()
                  << " pixels off by 1\n";
    }
  std::filesystem::remove_all(d);
}

}  // namespace
}  // namespace netspec::data
