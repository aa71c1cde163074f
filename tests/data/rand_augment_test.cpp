// RandAugment (rand-m9-n2-mstd0.5 with and without inc1, and the colour-only set is not timm's)
// and AutoAugment's ImageNet policy against timm's auto_augment.py run by Debian's python with
// numpy's choice / random.random / random.gauss patched to netspec's draws: the same image
// (within 1 level) for many samples; every draw netspec made is consumed by timm.
#include "data/rand_augment.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/npy.h"
#include "core/process_env.h"
#include "data/data_test_util.h"
#include "data/loader.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

TEST(RandAugmentReference, PoliciesMatchTimm) {
  const std::string py = test::timm_file("data/auto_augment.py");
  export_openblas_coretype();
  if (py.empty() || std::system("/usr/bin/python3 -c 'import PIL, numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "needs /usr/bin/python3 with PIL and timm in the oracle venv";
  const std::string d = test::tmpdir("randaug");
  Image8 im{3, 21, 26, std::vector<uint8_t>(3 * 21 * 26)};
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t y = 0; y < 21; ++y)
      for (int64_t x = 0; x < 26; ++x)
        im.at(c, y, x) = static_cast<uint8_t>((30 + 7 * x + 5 * y + 50 * c + (x * y) % 13) % 256);
  Tensor t(DType::kUI8, {3, 21, 26});
  std::copy(im.px.begin(), im.px.end(), t.data<uint8_t>());
  write_npy(d + "/in.npy", t);
  nlohmann::json cases = nlohmann::json::array();
  std::vector<Image8> mine;
  for (int k = 0; k < 36; ++k) {
    AugDraws dr(1000 + k);
    const int kind = k % 3;
    RandAugmentConfig rc;
    rc.increasing = kind == 1;
    const Image8 o = kind == 2 ? auto_augment_imagenet(im, dr) : rand_augment(im, rc, dr);
    mine.push_back(o);
    cases.push_back({{"config", kind == 2   ? "original"
                                : kind == 1 ? "rand-m9-n2-mstd0.5-inc1"
                                            : "rand-m9-n2-mstd0.5"},
                     {"indices", dr.indices},
                     {"uniforms", dr.uniforms},
                     {"gausses", dr.gausses}});
  }
  std::ofstream(d + "/cases.json") << cases.dump();
  const std::string cmd = "/usr/bin/python3 " + std::string(NETSPEC_SOURCE_DIR) +
                          "/tests/data/rand_augment_reference.py " + py + " " + d;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  int changed = 0;
  for (size_t k = 0; k < mine.size(); ++k) {
    Tensor ref = read_npy(d + "/out" + std::to_string(k) + ".npy");
    int worst = 0;
    bool diff_from_input = false;
    for (int64_t i = 0; i < ref.numel(); ++i) {
      worst = std::max(worst, std::abs(int(mine[k].px[i]) - int(ref.data<uint8_t>()[i])));
      diff_from_input |= ref.data<uint8_t>()[i] != im.px[i];
    }
    changed += diff_from_input;
    EXPECT_LE(worst, 1) << "case " << k << " " << cases[k].dump();
  }
  EXPECT_GT(changed, 24);  // most samples were really augmented
  fs::remove_all(d);
}

}  // namespace
}  // namespace netspec::data

namespace netspec::data {
namespace {

// The loader applies the policy to each training sample with sample_draws(seed, epoch, index)
// (no crop/flip here, so the input is the stored image), then normalises.
TEST(RandAugment, LoaderAppliesThePolicyPerSample) {
  const int64_t n = 6;
  Tensor x(DType::kUI8, {n, 3, 8, 9});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>(i * 37 % 251);
  Dataset ds(x, Tensor::from<int32_t>(DType::kI32, {n}, {0, 1, 2, 0, 1, 2}), {0.5f, 0.5f, 0.5f},
             {0.25f, 0.25f, 0.25f});
  Augment a;
  a.rand_augment = true;
  a.ra.increasing = true;
  Loader ld(ds, n, true, 11, a);
  ld.start_epoch(3);
  Tensor bx, by;
  ld.batch(0, bx, by);
  int64_t changed = 0;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t s = ld.order()[r];
    Image8 im{3, 8, 9,
              std::vector<uint8_t>(x.data<uint8_t>() + s * 216, x.data<uint8_t>() + (s + 1) * 216)};
    AugDraws dr = sample_draws(11, 3, s);
    const Image8 o = rand_augment(im, a.ra, dr);
    for (int64_t i = 0; i < 216; ++i) {
      const float want = (static_cast<float>(o.px[i]) / 255.f - 0.5f) / 0.25f;
      ASSERT_EQ(bx.data<float>()[r * 216 + i], want) << r << " " << i;
      changed += o.px[i] != im.px[i];
    }
  }
  EXPECT_GT(changed, 0);
}

}  // namespace
}  // namespace netspec::data
