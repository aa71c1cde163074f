// Mixup / cutmix against timm's Mixup (mode 'batch', its mixup.py run by Debian's python with
// np.random patched to the draws netspec made) and random erasing against torchvision's
// RandomErasing (torch's random calls patched likewise): the same images and soft targets.
// Also the Beta sampler's moments and the draws' determinism.
#include "data/mix.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/npy.h"
#include "core/process_env.h"
#include "data/data_test_util.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

bool torchvision_ok() {
  export_openblas_coretype();
  return std::system("/usr/bin/python3 -c 'import torch, torchvision' >/dev/null 2>&1") == 0;
}

Tensor images(int64_t b, int64_t c, int64_t h, int64_t w) {
  Tensor x(DType::kF32, {b, c, h, w});
  for (int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] =
        static_cast<float>(std::sin(0.37 * static_cast<double>(i)) + 0.1 * (i % 7));
  return x;
}

TEST(MixReference, MixupCutmixMatchTimmAndErasingMatchesTorchvision) {
  const std::string mix_py = test::timm_file("data/mixup.py");
  if (mix_py.empty() || !torchvision_ok())
    GTEST_SKIP() << "needs /usr/bin/python3 with torch + torchvision and timm's mixup.py in the "
                    "oracle venv (scripts/install-oracles.sh)";
  const std::string d = test::tmpdir("mix");
  const Tensor x = images(6, 3, 10, 12);
  const Tensor y = Tensor::from<int32_t>(DType::kI32, {6}, {0, 3, 1, 4, 2, 3});
  write_npy(d + "/x.npy", x);
  write_npy(d + "/y.npy", y);
  // mixup only; cutmix only (box clipped at a corner); both with the switch; prob not met.
  std::vector<MixConfig> cfgs(5);
  cfgs[0].mixup_alpha = 0.8;
  cfgs[1].cutmix_alpha = 1.0;
  cfgs[2].mixup_alpha = 0.8, cfgs[2].cutmix_alpha = 1.0;
  cfgs[3].mixup_alpha = 0.8, cfgs[3].cutmix_alpha = 1.0;
  cfgs[4].mixup_alpha = 0.8, cfgs[4].prob = 0.5;
  nlohmann::json meta;
  std::vector<Tensor> outs_x, outs_t;
  std::vector<double> lams;
  int cut_seen = 0, mix_seen = 0;
  for (size_t k = 0; k < cfgs.size(); ++k) {
    MixConfig& c = cfgs[k];
    c.smoothing = 0.1;
    c.classes = 5;
    MixDraw dr;
    // Search batches until the draw shows the case's branch (deterministic).
    for (int64_t b = 0;; ++b) {
      dr = mix_draw(c, 42, 1, b, 10, 12);
      const bool cut = c.cutmix_alpha > 0 && (c.mixup_alpha <= 0 || dr.u_switch < c.switch_prob);
      if (k == 1 && !(dr.cy < 3 && dr.cx > 9)) continue;  // clipped box
      if (k == 2 && cut) continue;
      if (k == 3 && !cut) continue;
      if (k == 4 && dr.u_prob < c.prob) continue;
      break;
    }
    Tensor xm = x.clone();
    double lam = 0;
    outs_t.push_back(apply_mix(c, dr, xm, y, &lam));
    outs_x.push_back(xm);
    lams.push_back(lam);
    (k == 1 || k == 3 ? cut_seen : mix_seen) += lam < 1;
    meta["mix"].push_back({{"mixup_alpha", c.mixup_alpha},
                           {"cutmix_alpha", c.cutmix_alpha},
                           {"prob", c.prob},
                           {"switch_prob", c.switch_prob},
                           {"smoothing", c.smoothing},
                           {"classes", c.classes},
                           {"u_prob", dr.u_prob},
                           {"u_switch", dr.u_switch},
                           {"beta", dr.beta},
                           {"cy", dr.cy},
                           {"cx", dr.cx}});
  }
  EXPECT_EQ(lams[4], 1.0);  // not mixed: the smoothed one-hot targets
  EXPECT_EQ(cut_seen, 2);
  EXPECT_EQ(mix_seen, 2);
  // Random erasing: samples whose draws erase (first attempt and a later one) and one that does
  // not.
  std::vector<EraseBox> boxes;
  std::vector<std::vector<double>> us;
  int later = 0;
  for (int64_t s = 0; us.size() < 4 && s < 1000; ++s) {
    std::vector<double> u = erase_uniforms(7, 0, s);
    EraseBox b = erase_box(u, 0.5, 10, 12);
    std::vector<double> only_first = u;  // later attempts made to fail: h = 11 >= 10
    for (size_t i = 5; i < u.size(); i += 4) only_first[i] = only_first[i + 1] = 1.0;
    const bool first = erase_box(only_first, 0.5, 10, 12).on;
    if (us.size() == 1 && !(b.on && !first)) continue;  // one needing a retry
    if (us.size() == 2 && b.on) continue;               // one not erased
    later += b.on && !first;
    boxes.push_back(b);
    us.push_back(u);
    meta["erase"].push_back({{"p", 0.5}, {"u", u}, {"row", us.size() % 6}});
  }
  ASSERT_EQ(us.size(), 4u);
  EXPECT_EQ(later, 1);
  std::ofstream(d + "/meta.json") << meta.dump();
  const std::string cmd = "/usr/bin/python3 " + std::string(NETSPEC_SOURCE_DIR) +
                          "/tests/data/mix_reference.py " + d + " " + mix_py;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  for (size_t k = 0; k < cfgs.size(); ++k) {
    Tensor rx = read_npy(d + "/mix" + std::to_string(k) + "_x.npy");
    Tensor rt = read_npy(d + "/mix" + std::to_string(k) + "_t.npy");
    double dx = 0, dt = 0;
    for (int64_t i = 0; i < rx.numel(); ++i)
      dx = std::max(dx, std::abs(rx.as_double(i) - outs_x[k].as_double(i)));
    for (int64_t i = 0; i < rt.numel(); ++i)
      dt = std::max(dt, std::abs(rt.as_double(i) - outs_t[k].as_double(i)));
    EXPECT_LT(dx, 1e-6) << "case " << k;
    EXPECT_LT(dt, 1e-6) << "case " << k << " lam " << lams[k];
  }
  for (size_t k = 0; k < us.size(); ++k) {
    Tensor one = x.clone();
    const int64_t row = static_cast<int64_t>((k + 1) % 6);
    erase(one, row, boxes[k]);
    Tensor ref = read_npy(d + "/erase" + std::to_string(k) + ".npy");
    const float* mine = one.data<float>() + row * 360;
    int64_t zeros = 0;
    for (int64_t i = 0; i < 360; ++i) {
      EXPECT_EQ(mine[i], ref.data<float>()[i]) << "erase case " << k << " element " << i;
      zeros += ref.data<float>()[i] == 0;
    }
    EXPECT_EQ(zeros, boxes[k].on ? 3 * boxes[k].h * boxes[k].w : 0) << k;
  }
  fs::remove_all(d);
}

TEST(Mix, KnnMixupPairsEachSampleWithItsNearestNeighbour) {
  // Rows at levels 0, 0.1, 5, 5.3 (and one far row): neighbours 1, 0, 3, 2, 3.
  const std::vector<float> level = {0.f, 0.1f, 5.f, 5.3f, 9.f};
  Tensor x(DType::kF32, {5, 1, 2, 2});
  for (int64_t i = 0; i < 5; ++i)
    for (int e = 0; e < 4; ++e) x.data<float>()[i * 4 + e] = level[i] + 0.01f * e;
  const Tensor y = Tensor::from<int32_t>(DType::kI32, {5}, {0, 1, 2, 0, 1});
  EXPECT_EQ(nearest_rows(x), (std::vector<int64_t>{1, 0, 3, 2, 3}));
  MixConfig c;
  c.knn_alpha = 0.4;
  c.classes = 3;
  c.smoothing = 0.1;
  MixDraw d;
  d.u_prob = 0;
  d.beta = 0.7;
  const Tensor orig = x.clone();
  Tensor t = apply_knn_mix(c, d, x, y);
  const int64_t nn[5] = {1, 0, 3, 2, 3};
  for (int64_t i = 0; i < 5; ++i) {
    for (int e = 0; e < 4; ++e)
      EXPECT_NEAR(x.data<float>()[i * 4 + e],
                  0.7 * orig.data<float>()[i * 4 + e] + 0.3 * orig.data<float>()[nn[i] * 4 + e],
                  1e-6);
    for (int j = 0; j < 3; ++j) {
      auto q = [&](int64_t r) { return (y.data<int32_t>()[r] == j ? 0.9 : 0.0) + 0.1 / 3; };
      EXPECT_NEAR(t.data<float>()[i * 3 + j], 0.7 * q(i) + 0.3 * q(nn[i]), 1e-6) << i << " " << j;
    }
  }
}

// The seed's TrainConfig: kNN-mixup draws λ ~ Beta(knnMixupAlpha, knnMixupAlpha), default 1.0,
// independent of mixupAlpha (which only mixup uses).
TEST(Mix, KnnMixupDrawsFromKnnMixupAlpha) {
  TrainConfig t;
  EXPECT_EQ(t.knnMixupAlpha, 1.0);
  t.knnMixup = true;
  t.mixupAlpha = 0.3;
  t.knnMixupAlpha = 2.0;
  MixConfig c = MixConfig::from_train(t, 10);
  EXPECT_EQ(c.knn_alpha, 2.0);
  EXPECT_EQ(c.mixup_alpha, 0.0);  // mixup itself is off
  // λ's variance over many batches is Beta(2, 2)'s 1/20, not Beta(0.3, 0.3)'s 0.156.
  double s1 = 0, s2 = 0;
  const int n = 20000;
  for (int b = 0; b < n; ++b) {
    const double v = mix_draw(c, 5, 0, b, 8, 8).beta;
    s1 += v;
    s2 += v * v;
  }
  const double m = s1 / n, var = s2 / n - m * m;
  EXPECT_NEAR(m, 0.5, 0.01);
  EXPECT_NEAR(var, 1.0 / 20, 0.05 / 20);
  t.knnMixup = false;
  EXPECT_EQ(MixConfig::from_train(t, 10).knn_alpha, 0.0);
}

TEST(Mix, BetaSamplerMoments) {
  for (double a : {0.8, 1.0, 2.0}) {
    double s1 = 0, s2 = 0;
    const int n = 40000;
    for (int i = 0; i < n; ++i) {
      double v = beta_sample(a, a, static_cast<uint64_t>(i) * 7919);
      ASSERT_GT(v, 0);
      ASSERT_LT(v, 1);
      s1 += v;
      s2 += v * v;
    }
    const double m = s1 / n, var = s2 / n - m * m, want = 1 / (4 * (2 * a + 1));
    EXPECT_NEAR(m, 0.5, 0.01) << a;
    EXPECT_NEAR(var, want, 0.03 * want) << a;
  }
}

TEST(Mix, DrawsAreDeterministicPerSeedEpochBatch) {
  MixConfig c;
  c.mixup_alpha = 0.8;
  c.cutmix_alpha = 1.0;
  MixDraw a = mix_draw(c, 3, 2, 5, 32, 32), b = mix_draw(c, 3, 2, 5, 32, 32);
  MixDraw e = mix_draw(c, 3, 3, 5, 32, 32);
  EXPECT_EQ(a.beta, b.beta);
  EXPECT_EQ(a.cy, b.cy);
  EXPECT_NE(a.beta, e.beta);
  EXPECT_EQ(erase_uniforms(1, 2, 3), erase_uniforms(1, 2, 3));
  EXPECT_NE(erase_uniforms(1, 2, 3), erase_uniforms(1, 2, 4));
}

}  // namespace
}  // namespace netspec::data
