// netspec's own Winograd F(4x4, 3x3) kernels (exec/cpu/conv/winograd.h) on raw nChw8c arrays
// against an f64 direct loop: both schedules (per chunk, in passes; several passes), partial edge
// tiles, asymmetric padding, and weights read through strides (OIHW, flipped, feature roles swapped
// as the input-gradient conv reads them). The end-to-end forms are in cpu_conv_algorithm_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "exec/cpu/conv/winograd.h"

namespace netspec::testing {
namespace {

using exec::cpu::WinogradPlan;
using exec::cpu::WinogradShape;
using exec::cpu::WinogradWeights;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
std::unique_ptr<uint8_t, FreeDeleter> aligned_bytes(size_t n) {
  return std::unique_ptr<uint8_t, FreeDeleter>(
      static_cast<uint8_t*>(std::aligned_alloc(64, (n + 63) / 64 * 64 + 64)));
}

// n values uniform in [-1, 1).
std::vector<float> uniform_floats(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = u(rng);
  return v;
}

enum class WeightView { kOihw, kFlipped, kSwapped };

struct Case {
  int64_t N, C, H, W, O, pt, pb, pl, pr;
  WeightView view = WeightView::kOihw;
  int threads = 2;
  int64_t pass_bytes = 32 << 20;
};

// max |y - truth| / max |truth| of one convolution through plan_winograd; `schedule` gets
// whether the plan ran per chunk and its tiles per chunk or pass.
double run_case(const Case& k, bool* per_chunk, int64_t* chunk) {
  const int64_t OH = k.H + k.pt + k.pb - 2, OW = k.W + k.pl + k.pr - 2;
  std::mt19937 rng(static_cast<unsigned>(k.C * 131 + k.O + k.H));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> x(static_cast<size_t>(k.N * k.C * k.H * k.W)), w(k.O * k.C * 9);
  for (float& v : x) v = u(rng);
  for (float& v : w) v = u(rng);  // w[o][c][ky][kx]
  // x in nChw8c.
  std::vector<float> xb(x.size());
  for (int64_t n = 0; n < k.N; ++n)
    for (int64_t c = 0; c < k.C; ++c)
      for (int64_t h = 0; h < k.H; ++h)
        for (int64_t q = 0; q < k.W; ++q)
          xb[(((n * (k.C / 8) + c / 8) * k.H + h) * k.W + q) * 8 + c % 8] =
              x[((n * k.C + c) * k.H + h) * k.W + q];
  // The weights as stored, and where w[0, 0, 0, 0] lies with the strides that read them.
  std::vector<float> stored(w.size());
  WinogradWeights ws;
  int64_t base = 0;
  for (int64_t o = 0; o < k.O; ++o)
    for (int64_t c = 0; c < k.C; ++c)
      for (int64_t ky = 0; ky < 3; ++ky)
        for (int64_t kx = 0; kx < 3; ++kx) {
          const float v = w[((o * k.C + c) * 3 + ky) * 3 + kx];
          if (k.view == WeightView::kOihw) stored[((o * k.C + c) * 3 + ky) * 3 + kx] = v;
          if (k.view == WeightView::kFlipped) stored[((o * k.C + c) * 3 + 2 - ky) * 3 + 2 - kx] = v;
          if (k.view == WeightView::kSwapped)  // [c][o][2 - ky][2 - kx]: dx's kernel operand
            stored[((c * k.O + o) * 3 + 2 - ky) * 3 + 2 - kx] = v;
        }
  if (k.view == WeightView::kOihw) ws = {k.C * 9, 9, 3, 1};
  if (k.view == WeightView::kFlipped) ws = {k.C * 9, 9, -3, -1}, base = 8;
  if (k.view == WeightView::kSwapped) ws = {9, k.O * 9, -3, -1}, base = 8;

  const WinogradShape s{k.N, k.C, k.H, k.W, k.O, OH, OW, k.pt, k.pl};
  const WinogradPlan plan = exec::cpu::plan_winograd(s, ws, k.threads, k.pass_bytes);
  *per_chunk = plan.per_chunk;
  *chunk = plan.chunk;
  auto scratch = aligned_bytes(plan.scratch_bytes);
  std::vector<float> yb(static_cast<size_t>(k.N * k.O * OH * OW), std::nanf(""));
  plan.run(xb.data(), stored.data() + base, yb.data(), scratch.get());

  double err = 0, top = 0;
  for (int64_t n = 0; n < k.N; ++n)
    for (int64_t o = 0; o < k.O; ++o)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double t = 0;
          for (int64_t c = 0; c < k.C; ++c)
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t iy = oy + ky - k.pt, ix = ox + kx - k.pl;
                if (iy < 0 || iy >= k.H || ix < 0 || ix >= k.W) continue;
                t += static_cast<double>(x[((n * k.C + c) * k.H + iy) * k.W + ix]) *
                     w[((o * k.C + c) * 3 + ky) * 3 + kx];
              }
          const float got = yb[(((n * (k.O / 8) + o / 8) * OH + oy) * OW + ox) * 8 + o % 8];
          if (!std::isfinite(got)) return INFINITY;  // a position never written
          err = std::max(err, std::abs(got - t));
          top = std::max(top, std::abs(t));
        }
  return err / top;
}

TEST(CpuWinograd, MatchesF64DirectOnEverySchedule) {
  if (!exec::cpu::winograd_avx2_runs()) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  struct Want {
    Case k;
    bool per_chunk;
    int64_t chunk;  // 0: any
  };
  const std::vector<Want> cases{
      // One tile per image, tiles cut at the edges, asymmetric padding, more threads than work.
      {{1, 8, 4, 4, 16, 1, 1, 1, 1}, false, 1},
      {{2, 8, 5, 7, 16, 0, 2, 1, 1}, false, 0},
      {{2, 16, 9, 6, 32, 2, 0, 0, 2, WeightView::kFlipped, 3}, false, 0},
      {{3, 24, 11, 10, 16, 1, 1, 1, 1, WeightView::kSwapped, 1}, false, 0},
      // Per chunk: small weights, many tiles (8 * 16 = 128 >= 2 threads * 2 chunks of 30).
      {{8, 64, 16, 16, 64, 1, 1, 1, 1}, true, 30},
      {{8, 64, 16, 16, 64, 1, 1, 1, 1, WeightView::kSwapped}, true, 30},
      // In passes of 6 tiles (a pass of 6 * 36 * 384 floats): 18 tiles, three passes.
      {{2, 128, 12, 12, 256, 1, 1, 1, 1, WeightView::kOihw, 2, 6 * 36 * 384 * 4}, false, 6},
      {{2, 128, 10, 12, 256, 1, 1, 1, 1, WeightView::kFlipped, 2, 6 * 36 * 384 * 4}, false, 6},
  };
  for (const Want& c : cases) {
    bool per_chunk = false;
    int64_t chunk = 0;
    const double e = run_case(c.k, &per_chunk, &chunk);
    EXPECT_LT(e, c.k.C > 64 ? 5e-6 : 3e-6)
        << "C " << c.k.C << " O " << c.k.O << " " << c.k.H << "x" << c.k.W;
    EXPECT_EQ(per_chunk, c.per_chunk) << "C " << c.k.C;
    if (c.chunk) {
      EXPECT_EQ(chunk, c.chunk) << "C " << c.k.C;
    }
  }
}

// The weight gradient (F(3x3, 4x4) over dy's 4x4 tiles, summed in the transformed domain):
// against an f64 loop, one pass and several (products accumulated), partial tiles, asymmetric
// padding, dW written as OIHW and as HWIO.
TEST(CpuWinograd, WeightGradientMatchesF64) {
  if (!exec::cpu::winograd_avx2_runs()) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  struct GradCase {
    int64_t N, C, H, W, O, pt, pb, pl, pr;
    bool hwio = false;
    int64_t pass_tiles = 0;  // 0: one pass
    int threads = 2;
    bool per_thread = false;
  };
  const std::vector<GradCase> cases{
      {2, 16, 9, 7, 8, 1, 1, 1, 1},
      {3, 32, 4, 4, 16, 0, 2, 1, 1, true},
      {1, 16, 6, 5, 24, 2, 0, 0, 2},
      // One pass in blocks of 48 output rows: 104 = 48 + 48 + 8, over 3 workers.
      {2, 32, 6, 7, 104, 1, 1, 1, 1, false, 0, 3},
      {2, 48, 6, 6, 104, 0, 2, 1, 1, true},
      {4, 64, 12, 12, 64, 1, 1, 1, 1, false, 7},
      {4, 64, 12, 12, 64, 1, 1, 1, 1, true, 6},
      // Per thread: 128 tiles in chunks of 30 over 2 workers; 192 over 3 (uneven: 3, 2, 2).
      {8, 64, 16, 16, 64, 1, 1, 1, 1, false, 0, 2, true},
      {12, 64, 16, 16, 64, 1, 1, 1, 1, true, 0, 3, true}};
  for (const GradCase& k : cases) {
    const int64_t OH = k.H + k.pt + k.pb - 2, OW = k.W + k.pl + k.pr - 2;
    std::mt19937 rng(static_cast<unsigned>(k.C + k.O * 7 + k.H));
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> x(static_cast<size_t>(k.N * k.C * k.H * k.W)),
        dy(static_cast<size_t>(k.N * k.O * OH * OW));
    for (float& v : x) v = u(rng);
    for (float& v : dy) v = u(rng);
    auto blocked = [](const std::vector<float>& a, int64_t N, int64_t C, int64_t H, int64_t W) {
      std::vector<float> b(a.size());
      for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t i = 0; i < H * W; ++i)
            b[((n * (C / 8) + c / 8) * H * W + i) * 8 + c % 8] = a[(n * C + c) * H * W + i];
      return b;
    };
    const std::vector<float> xb = blocked(x, k.N, k.C, k.H, k.W),
                             db = blocked(dy, k.N, k.O, OH, OW);
    const WinogradWeights dw = k.hwio ? WinogradWeights{1, k.O, 3 * k.C * k.O, k.C * k.O}
                                      : WinogradWeights{k.C * 9, 9, 3, 1};
    const WinogradShape s{k.N, k.C, k.H, k.W, k.O, OH, OW, k.pt, k.pl};
    const int64_t pass = k.pass_tiles ? k.pass_tiles * 36 * (k.C + k.O) * 4 : 32 << 20;
    const exec::cpu::WinogradGradPlan plan = exec::cpu::plan_winograd_grad(s, dw, k.threads, pass);
    EXPECT_EQ(plan.per_thread, k.per_thread) << "N " << k.N << " C " << k.C;
    // One pass over every tile: the products and dW per block, no P of all 36 planes.
    EXPECT_EQ(plan.blocks, !k.per_thread && !k.pass_tiles) << "N " << k.N << " C " << k.C;
    if (k.pass_tiles) {
      EXPECT_LT(plan.chunk, s.tiles());  // several passes
    }
    auto scratch = aligned_bytes(plan.scratch_bytes);
    std::vector<float> got(static_cast<size_t>(k.O * k.C * 9), std::nanf(""));
    plan.run(xb.data(), db.data(), got.data(), scratch.get());
    double err = 0, top = 0;
    for (int64_t o = 0; o < k.O; ++o)
      for (int64_t c = 0; c < k.C; ++c)
        for (int64_t ky = 0; ky < 3; ++ky)
          for (int64_t kx = 0; kx < 3; ++kx) {
            double t = 0;
            for (int64_t n = 0; n < k.N; ++n)
              for (int64_t oy = 0; oy < OH; ++oy)
                for (int64_t ox = 0; ox < OW; ++ox) {
                  const int64_t iy = oy + ky - k.pt, ix = ox + kx - k.pl;
                  if (iy < 0 || iy >= k.H || ix < 0 || ix >= k.W) continue;
                  t += static_cast<double>(dy[((n * k.O + o) * OH + oy) * OW + ox]) *
                       x[((n * k.C + c) * k.H + iy) * k.W + ix];
                }
            const float g = got[o * dw.o + c * dw.c + ky * dw.ky + kx * dw.kx];
            ASSERT_TRUE(std::isfinite(g)) << o << " " << c << " " << ky << " " << kx;
            err = std::max(err, std::abs(g - t));
            top = std::max(top, std::abs(t));
          }
    std::printf("dW C %ld O %ld %ldx%ld: %.3g\n", static_cast<long>(k.C), static_cast<long>(k.O),
                static_cast<long>(k.H), static_cast<long>(k.W), err / top);
    EXPECT_LT(err / top, 5e-6) << "C " << k.C << " O " << k.O << " " << k.H << "x" << k.W;
  }
}

// The 16-lane products (winograd_avx512.cpp) run the AVX2 kernel's FMAs in its order: the same
// plan gives the same bits either way, forward (per chunk, in passes, a last group of fewer than
// 12 rows) and weight gradient (per thread, in passes).
TEST(CpuWinograd, Avx512ProductsGiveTheAvx2Bits) {
  if (!exec::cpu::winograd_avx2_runs() || !exec::cpu::winograd_avx512_products())
    GTEST_SKIP() << "no AVX-512 products on this CPU";
  std::mt19937 rng(7);
  auto filled = [&](int64_t n) { return uniform_floats(rng, n); };
  struct Shape {
    int64_t N, C, H, W, O, pass_bytes;
  };
  for (const Shape& k : {Shape{8, 64, 16, 16, 64, 32 << 20}, Shape{2, 128, 10, 12, 256, 32 << 20},
                         Shape{3, 32, 9, 9, 48, 5 * 36 * (32 + 48) * 4}}) {
    const WinogradShape s{k.N, k.C, k.H, k.W, k.O, k.H, k.W, 1, 1};
    const std::vector<float> x = filled(k.N * k.C * k.H * k.W), w = filled(k.O * k.C * 9),
                             dy = filled(k.N * k.O * k.H * k.W);
    WinogradPlan plan = exec::cpu::plan_winograd(s, {k.C * 9, 9, 3, 1}, 2, k.pass_bytes);
    exec::cpu::WinogradGradPlan grad =
        exec::cpu::plan_winograd_grad(s, {k.C * 9, 9, 3, 1}, 2, k.pass_bytes);
    auto scratch = aligned_bytes(std::max(plan.scratch_bytes, grad.scratch_bytes));
    std::vector<float> y[2], dw[2];
    for (int wide = 0; wide < 2; ++wide) {
      plan.avx512_products = grad.avx512_products = wide == 1;
      y[wide].assign(static_cast<size_t>(k.N * k.O * k.H * k.W), 0.f);
      dw[wide].assign(w.size(), 0.f);
      plan.run(x.data(), w.data(), y[wide].data(), scratch.get());
      grad.run(x.data(), dy.data(), dw[wide].data(), scratch.get());
    }
    EXPECT_EQ(y[0], y[1]) << "forward C " << k.C << " O " << k.O;
    EXPECT_EQ(dw[0], dw[1]) << "weight gradient C " << k.C << " O " << k.O;
    EXPECT_NE(y[0], std::vector<float>(y[0].size(), 0.f));
  }
}

// The 16-lane transforms on nChw16c (WinogradShape::block = 16, winograd_transforms.h compiled for
// AVX-512) give the 8-lane ones' bits on nChw8c: forward per chunk and in passes, with
// cut edge tiles and asymmetric padding, and the weight gradient in every schedule.
TEST(CpuWinograd, Block16GivesTheBlock8Results) {
  if (!exec::cpu::winograd_avx2_runs() || !exec::cpu::winograd_avx512_products())
    GTEST_SKIP() << "no AVX-512 transforms on this CPU";
  std::mt19937 rng(11);
  auto filled = [&](int64_t n) { return uniform_floats(rng, n); };
  // plain [N, C, HW] <-> nChw{B}c
  auto blocked = [](const std::vector<float>& a, int64_t N, int64_t C, int64_t HW, int64_t B) {
    std::vector<float> b(a.size());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < HW; ++i)
          b[((n * (C / B) + c / B) * HW + i) * B + c % B] = a[(n * C + c) * HW + i];
    return b;
  };
  auto plain = [](const std::vector<float>& b, int64_t N, int64_t C, int64_t HW, int64_t B) {
    std::vector<float> a(b.size());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < HW; ++i)
          a[(n * C + c) * HW + i] = b[((n * (C / B) + c / B) * HW + i) * B + c % B];
    return a;
  };
  struct Shape {
    int64_t N, C, H, W, O, pt, pb, pl, pr, pass_bytes;
  };
  for (const Shape& k : {Shape{8, 64, 16, 16, 64, 1, 1, 1, 1, 32 << 20},
                         Shape{2, 128, 10, 12, 256, 2, 0, 1, 1, 32 << 20},
                         Shape{3, 32, 9, 7, 48, 0, 2, 2, 0, 5 * 36 * (32 + 48) * 4},
                         Shape{2, 16, 6, 6, 16, 1, 1, 1, 1, 32 << 20}}) {
    const int64_t OH = k.H + k.pt + k.pb - 2, OW = k.W + k.pl + k.pr - 2;
    const std::vector<float> x = filled(k.N * k.C * k.H * k.W), w = filled(k.O * k.C * 9),
                             dy = filled(k.N * k.O * OH * OW);
    std::vector<float> y[2], dw[2];
    for (int wide = 0; wide < 2; ++wide) {
      const int64_t B = wide ? 16 : 8;
      WinogradShape s{k.N, k.C, k.H, k.W, k.O, OH, OW, k.pt, k.pl};
      s.block = B;
      const WinogradPlan plan = exec::cpu::plan_winograd(s, {k.C * 9, 9, 3, 1}, 2, k.pass_bytes);
      const exec::cpu::WinogradGradPlan grad =
          exec::cpu::plan_winograd_grad(s, {k.C * 9, 9, 3, 1}, 2, k.pass_bytes);
      auto scratch = aligned_bytes(std::max(plan.scratch_bytes, grad.scratch_bytes));
      const std::vector<float> xb = blocked(x, k.N, k.C, k.H * k.W, B),
                               db = blocked(dy, k.N, k.O, OH * OW, B);
      std::vector<float> yb(static_cast<size_t>(k.N * k.O * OH * OW), std::nanf(""));
      dw[wide].assign(w.size(), std::nanf(""));
      plan.run(xb.data(), w.data(), yb.data(), scratch.get());
      grad.run(xb.data(), db.data(), dw[wide].data(), scratch.get());
      y[wide] = plain(yb, k.N, k.O, OH * OW, B);
    }
    // The same operations lane by lane, in the same order: the same bits.
    for (size_t i = 0; i < y[0].size(); ++i) ASSERT_TRUE(std::isfinite(y[1][i])) << i;
    for (size_t i = 0; i < dw[0].size(); ++i) ASSERT_TRUE(std::isfinite(dw[1][i])) << i;
    EXPECT_EQ(y[0], y[1]) << "forward C " << k.C << " O " << k.O;
    EXPECT_EQ(dw[0], dw[1]) << "weight gradient C " << k.C << " O " << k.O;
  }
}

}  // namespace
}  // namespace netspec::testing
