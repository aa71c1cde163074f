// resize_center_crop against PIL (what torchvision's Resize + CenterCrop run on): a python with
// PIL is taken from $NETSPEC_PIL_PYTHON, the system python3 (Debian's python3-pil comes with
// python3-torchvision) or BUILD_DIR/venv; the test skips when none has it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/data_test_util.h"
#include "data/image.h"

namespace netspec::data {
namespace {

std::string python_with_pil() {
  std::vector<std::string> cands;
  if (const char* e = std::getenv("NETSPEC_PIL_PYTHON")) cands.push_back(e);
  cands.push_back("python3");
  cands.push_back(std::string(NETSPEC_BINARY_DIR) + "/venv/bin/python");
  for (const auto& p : cands)
    if (std::system((p + " -c 'import PIL' >/dev/null 2>&1").c_str()) == 0) return p;
  return "";
}

TEST(PilOracle, ResizeCenterCropWithinOneLevelOfPil) {
  const std::string py = python_with_pil();
  if (py.empty()) GTEST_SKIP() << "no python with PIL (python3-pil or NETSPEC_PIL_PYTHON)";
  const std::string d = test::tmpdir("pil");
  // A 517x389 pattern with smooth and noisy channels; references for downscaling (224, 100) and
  // upscaling (600): torchvision Resize(s) = shorter side s, longer int(s·long/short), bilinear;
  // CenterCrop(s) offsets int(round((size - s) / 2)).
  std::ofstream(d + "/gen.py") << R"(import random, sys
from PIL import Image
d = sys.argv[1]
random.seed(0)
w, h = 517, 389
im = Image.new("RGB", (w, h))
px = im.load()
for y in range(h):
    for x in range(w):
        px[x, y] = ((x * 3 + y) % 256, (x * y // 7) % 256, random.randrange(256))
im.save(d + "/in.png")
for s in (224, 100, 600):
    nh, nw = s, int(s * w / h)
    r = im.resize((nw, nh), Image.BILINEAR)
    left, top = int(round((nw - s) / 2.0)), int(round((nh - s) / 2.0))
    r.crop((left, top, left + s, top + s)).save(d + "/ref_%d.png" % s)
im.resize((120, 160), Image.BILINEAR).save(d + "/stretch.png")  # resize_images: no crop
)";
  ASSERT_EQ(std::system((py + " " + d + "/gen.py " + d).c_str()), 0);
  const Tensor in = decode_image(d + "/in.png");
  for (int s : {224, 100, 600}) {
    const Tensor mine = resize_center_crop(in, s, s);
    const Tensor ref = decode_image(d + "/ref_" + std::to_string(s) + ".png");
    ASSERT_EQ(mine.shape(), ref.shape());
    int worst = 0;
    int64_t differ = 0;
    for (int64_t i = 0; i < ref.numel(); ++i) {
      const int diff = std::abs(mine.data<uint8_t>()[i] - ref.data<uint8_t>()[i]);
      worst = std::max(worst, diff);
      differ += diff != 0;
    }
    // PIL rounds to 8 bits between its horizontal and vertical passes; we keep floats.
    EXPECT_LE(worst, 1) << s;
    EXPECT_LT(differ, ref.numel() / 3) << s;
  }
  // resize_images (trainRes): the whole image stretched to 160x120, ui8 within one level of PIL;
  // the f32 path is the same filter before rounding (within 0.5 of the ui8 result).
  Tensor batch(DType::kUI8, {1, 3, in.shape()[1], in.shape()[2]});
  std::memcpy(batch.raw(), in.raw(), in.nbytes());
  const Tensor mine = resize_images(batch, 160, 120);
  const Tensor ref = decode_image(d + "/stretch.png");
  ASSERT_EQ(mine.shape(), (Shape{1, 3, 160, 120}));
  Tensor as_f32(DType::kF32, batch.shape());
  for (int64_t i = 0; i < batch.numel(); ++i) as_f32.data<float>()[i] = batch.data<uint8_t>()[i];
  const Tensor f = resize_images(as_f32, 160, 120);
  int worst = 0;
  double worst_f = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    worst = std::max(worst, std::abs(mine.data<uint8_t>()[i] - ref.data<uint8_t>()[i]));
    worst_f = std::max(worst_f, double(std::abs(f.data<float>()[i] - mine.data<uint8_t>()[i])));
  }
  EXPECT_LE(worst, 1);
  EXPECT_LE(worst_f, 0.5 + 1e-3);
}

}  // namespace
}  // namespace netspec::data
