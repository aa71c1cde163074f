// resize_center_crop against PIL (what torchvision's Resize + CenterCrop run on): a python with
// PIL is taken from $NETSPEC_PIL_PYTHON, the system python3 (Debian's python3-pil comes with
// python3-torchvision) or BUILD_DIR/venv; the test skips when none has it.
#include <gtest/gtest.h>

#include <cstdlib>
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
}

}  // namespace
}  // namespace netspec::data
