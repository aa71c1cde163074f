// The fold task's pieces: AlphaFold 2's metrics against hand-computed cases (identical chains,
// one residue moved by a known vector, a global rigid motion, distogram bins), the af2Fold loss
// in the graph equal to the host metrics (f64) and its gradient checked by finite differences in
// f64 on ref and cpu, and the generated backbones' geometry.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "data/protein.h"
#include "exec/backend.h"
#include "gradcheck/gradcheck.h"
#include "hlo/builder.h"
#include "losses/loss.h"
#include "tasks/fold/fold_metrics.h"

namespace netspec::tasks::fold {
namespace {

std::vector<Frame> frames_of(const data::Chain& c) {
  std::vector<Frame> f;
  for (const auto& x : c.xyz) f.push_back(data::backbone_frame(x));
  return f;
}

Frame at(double x, double y, double z) { return {1, 0, 0, 0, 1, 0, 0, 0, 1, x, y, z}; }

// Q·R_i and Q·t_i + s for every frame (Q: rotation by `deg` about (1, 2, 2)/3).
std::vector<Frame> moved(const std::vector<Frame>& fs, double deg, const std::array<double, 3>& s) {
  const double a = deg * std::numbers::pi / 180, c = std::cos(a), sn = std::sin(a);
  const double u[3] = {1.0 / 3, 2.0 / 3, 2.0 / 3};
  double q[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double cr = i == j ? 0 : (((j - i + 3) % 3 == 1) ? -1 : 1) * u[3 - i - j];
      q[i][j] = (i == j ? c : 0) + (1 - c) * u[i] * u[j] + sn * cr;
    }
  std::vector<Frame> out;
  for (const Frame& f : fs) {
    Frame g{};
    for (int r = 0; r < 3; ++r) {
      for (int k = 0; k < 3; ++k)
        for (int m = 0; m < 3; ++m) g[size_t(3 * r + k)] += q[r][m] * f[size_t(3 * m + k)];
      for (int m = 0; m < 3; ++m) g[size_t(9 + r)] += q[r][m] * f[size_t(9 + m)];
      g[size_t(9 + r)] += s[size_t(r)];
    }
    out.push_back(g);
  }
  return out;
}

TEST(FoldMetrics, IdenticalChainsScoreFapeZeroAndLddtHundred) {
  const std::vector<Frame> t = frames_of(data::generate_chains(1, 24, 3)[0]);
  const std::vector<double> mask(t.size(), 1.0);
  EXPECT_EQ(fape(t, t, mask), 0.0);
  EXPECT_EQ(lddt_ca(t, t, mask), 100.0);
}

// Residue k's frame moved by δ: every pair (i, k) and (k, j) with i, j ≠ k is off by |δ| (R_iᵀδ
// and R_kᵀδ), the rest by 0, so FAPE = 2(N - 1)·min(|δ|, 10)/N².
TEST(FoldMetrics, FapeOfOneMovedResidueIsClosedForm) {
  const std::vector<Frame> t = frames_of(data::generate_chains(1, 10, 5)[0]);
  const std::vector<double> mask(t.size(), 1.0);
  for (double len : {3.0, 12.0}) {
    std::vector<Frame> p = t;
    p[4][9] += 0.6 * len, p[4][10] += 0.8 * len;  // |δ| = len
    EXPECT_NEAR(fape(p, t, mask), 2.0 * 9 * std::min(len, 10.0) / 100, 1e-12) << len;
  }
  // A masked residue is not scored: moving it changes nothing.
  std::vector<double> m2 = mask;
  m2[4] = 0;
  std::vector<Frame> p = t;
  p[4][9] += 5;
  EXPECT_NEAR(fape(p, t, m2), 0.0, 1e-12);
}

// Four Cα on a line 3.8 Å apart, the last one moved 1.5 Å outward: its 6 ordered pairs are off
// by 1.5 Å (within 2 and 4, not 0.5 and 1: 0.5 each), the other 6 exact: lDDT = 75. A fifth Cα
// at 30 Å is >= 15 Å from all four: its pairs are left out whatever it does.
TEST(FoldMetrics, LddtOfAKnownPerturbationIsClosedForm) {
  std::vector<Frame> t = {at(0, 0, 0), at(3.8, 0, 0), at(7.6, 0, 0), at(11.4, 0, 0), at(30, 0, 0)};
  std::vector<Frame> p = t;
  p[3][9] = 12.9;
  p[4][9] = 45;  // unscored: its true distances are all >= 15 Å
  const std::vector<double> mask(t.size(), 1.0);
  EXPECT_DOUBLE_EQ(lddt_ca(p, t, mask), 75.0);
  p[3][9] = 11.4 + 0.7;  // 0.7 Å: within 1, 2, 4 -> 0.75 each
  EXPECT_DOUBLE_EQ(lddt_ca(p, t, mask), 100 * (6 * 0.75 + 6) / 12);
}

TEST(FoldMetrics, FapeAndLddtAreInvariantToAGlobalRigidMotion) {
  const std::vector<Frame> t = frames_of(data::generate_chains(1, 20, 7)[0]);
  const std::vector<Frame> p = frames_of(data::generate_chains(1, 20, 8)[0]);
  const std::vector<double> mask(t.size(), 1.0);
  const double f0 = fape(p, t, mask), l0 = lddt_ca(p, t, mask);
  EXPECT_GT(f0, 1.0);
  const std::vector<Frame> q = moved(p, 73, {4, -9, 2.5});
  EXPECT_GT(std::abs(q[3][9] - p[3][9]), 0.5);  // it did move
  EXPECT_NEAR(fape(q, t, mask), f0, 1e-10);
  EXPECT_NEAR(fape(p, moved(t, -31, {1, 2, 3}), mask), f0, 1e-10);
  EXPECT_DOUBLE_EQ(lddt_ca(q, t, mask), l0);
}

TEST(FoldMetrics, DistogramBinsAndCrossEntropy) {
  // 64 bins: edges 2.3125 + 0.3125·k, k = 0..62
  EXPECT_EQ(distogram_bin(2.0, 64), 0);
  EXPECT_EQ(distogram_bin(2.3125, 64), 0);
  EXPECT_EQ(distogram_bin(2.4, 64), 1);
  EXPECT_EQ(distogram_bin(3.8, 64), 5);  // (3.8 - 2.3125)/0.3125 = 4.76
  EXPECT_EQ(distogram_bin(21.7, 64), 63);
  const std::vector<Frame> t = {at(0, 0, 0), at(3.8, 0, 0)};
  const std::vector<double> mask = {1, 1};
  std::vector<double> logits(2 * 2 * 64, 0.0);
  EXPECT_NEAR(distogram_ce(logits, 64, t, mask), std::log(64.0), 1e-12);
  // logit 2 on the true bin of every pair: CE = log(63 + e²) - 2
  const int bins_of[4] = {0, 5, 5, 0};  // pairs (0,0) (0,1) (1,0) (1,1)
  for (int p = 0; p < 4; ++p) logits[size_t(p * 64 + bins_of[p])] = 2;
  EXPECT_NEAR(distogram_ce(logits, 64, t, mask), std::log(63 + std::exp(2.0)) - 2, 1e-12);
}

TEST(ProteinData, GeneratedBackbonesHaveIdealGeometry) {
  const std::vector<data::Chain> cs = data::generate_chains(3, 40, 11);
  ASSERT_EQ(cs.size(), 3u);
  auto d = [](const auto& x, int a, const auto& y, int b) {
    double s = 0;
    for (int k = 0; k < 3; ++k) s += std::pow(x[size_t(3 * a + k)] - y[size_t(3 * b + k)], 2);
    return std::sqrt(s);
  };
  for (const data::Chain& c : cs) {
    ASSERT_EQ(c.aa.size(), 40u);
    for (size_t i = 0; i < c.xyz.size(); ++i) {
      EXPECT_NEAR(d(c.xyz[i], 0, c.xyz[i], 1), data::kBondNCa, 1e-9);
      EXPECT_NEAR(d(c.xyz[i], 1, c.xyz[i], 2), data::kBondCaC, 1e-9);
      EXPECT_GE(c.aa[i], 0);
      EXPECT_LT(c.aa[i], 20);
      if (i + 1 == c.xyz.size()) continue;
      EXPECT_NEAR(d(c.xyz[i], 2, c.xyz[i + 1], 0), data::kBondCN, 1e-9);
      EXPECT_NEAR(d(c.xyz[i], 1, c.xyz[i + 1], 1), 3.8, 0.01);  // trans peptide: 3.804 Å
    }
    // frames: orthonormal, right-handed, at CA
    for (const auto& x : c.xyz) {
      const Frame f = data::backbone_frame(x);
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
          double s = 0;
          for (int r = 0; r < 3; ++r) s += f[size_t(3 * r + a)] * f[size_t(3 * r + b)];
          EXPECT_NEAR(s, a == b ? 1.0 : 0.0, 1e-12);
        }
      const double det = f[0] * (f[4] * f[8] - f[5] * f[7]) - f[1] * (f[3] * f[8] - f[5] * f[6]) +
                         f[2] * (f[3] * f[7] - f[4] * f[6]);
      EXPECT_NEAR(det, 1.0, 1e-12);
      EXPECT_EQ(f[9], x[3]);
    }
  }
  // Secondary structure from the sequence: Cα i, i+4 inside an α-helix stretch about 6.3 Å apart
  // (ideal α: 6.2), inside a β stretch about 13 Å (each φ, ψ drawn with 4° noise).
  auto mean_span = [&](const std::string& cls, double lo, double hi) {
    double sum = 0;
    int count = 0;
    for (const data::Chain& c : cs)
      for (size_t i = 0; i + 4 < c.aa.size(); ++i) {
        bool in = true;
        for (size_t k = i; k <= i + 4; ++k)
          in &= cls.find(data::kRestypes[c.aa[k]]) != std::string::npos;
        if (!in) continue;
        const double span = d(c.xyz[i], 1, c.xyz[i + 4], 1);
        EXPECT_GT(span, lo) << cls;
        EXPECT_LT(span, hi) << cls;
        sum += span, ++count;
      }
    EXPECT_GT(count, 3) << cls;
    return sum / std::max(count, 1);
  };
  EXPECT_NEAR(mean_span("ARQELKM", 5.0, 7.8), 6.4, 0.4);
  EXPECT_NEAR(mean_span("IFTWYV", 11.0, 14.5), 13.0, 0.8);
  // deterministic: the same seed gives the same chains
  EXPECT_EQ(data::generate_chains(3, 40, 11)[2].xyz, cs[2].xyz);
  EXPECT_NE(data::generate_chains(3, 40, 12)[2].xyz, cs[2].xyz);
}

// main(pred [B, L, 12 + L·K], labels [B, L, 13]) -> af2Fold loss, f64; pred scaled by 6 first
// so some distances pass the 10 Å clamp.
std::unique_ptr<hlo::Module> loss_module(int64_t b, int64_t l, int64_t bins, double scale) {
  auto m = std::make_unique<hlo::Module>();
  hlo::Type pt = hlo::Type::tensor(DType::kF64, {b, l, 12 + l * bins});
  hlo::Func* f = m->add_func("main", {pt, losses::fold_label_type(pt)});
  hlo::Builder bd(f->body.get());
  hlo::Value* p = bd.multiply(f->arg(0), bd.constant_splat(scale, pt));
  bd.func_return({losses::fold_loss(bd, p, f->arg(1))});
  return m;
}

// Labels of generated chains [B, L, 13] (mask 0 on residue 1 of sample 1), in f64.
Tensor labels_of(int64_t b, int64_t l) {
  data::Dataset ds = data::fold_samples(data::generate_chains(b, l, 21), l);
  Tensor y(DType::kF64, {b, l, 13});
  for (int64_t i = 0; i < y.numel(); ++i) y.data<double>()[i] = ds.y.data<float>()[i];
  y.data<double>()[(l + 1) * 13 + 12] = 0;
  return y;
}

TEST(FoldLoss, GraphEqualsHostMetrics) {
  const int64_t b = 2, l = 5, bins = 6;
  Tensor y = labels_of(b, l);
  Tensor p(DType::kF64, {b, l, 12 + l * bins});
  uint64_t z = 99;
  for (int64_t i = 0; i < p.numel(); ++i) {
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;
    p.data<double>()[i] = double(z >> 11) * 0x1.0p-53 * 2 - 1;
  }
  auto exe = exec::make_backend("ref")->load(
      std::shared_ptr<const hlo::Module>(loss_module(b, l, bins, 6)));
  const double got = exe->run("main", {p, y}).at(0).as_double(0);
  double want = 0;
  for (int64_t s = 0; s < b; ++s) {
    std::vector<Frame> pf(static_cast<size_t>(l)), tf(static_cast<size_t>(l));
    std::vector<double> mask(static_cast<size_t>(l)), logits;
    for (int64_t r = 0; r < l; ++r) {
      const double* pr = p.data<double>() + (s * l + r) * (12 + l * bins);
      const double* tr = y.data<double>() + (s * l + r) * 13;
      for (int k = 0; k < 12; ++k)
        pf[size_t(r)][size_t(k)] = 6 * pr[k], tf[size_t(r)][size_t(k)] = tr[k];
      mask[size_t(r)] = tr[12];
      for (int64_t k = 12; k < 12 + l * bins; ++k) logits.push_back(6 * pr[k]);
    }
    want += (fape(pf, tf, mask, 10, 1e-4) / 10 + 0.3 * distogram_ce(logits, bins, tf, mask)) /
            double(b);
  }
  EXPECT_GT(want, 0.5);
  EXPECT_NEAR(got, want, 1e-12 * want);
}

TEST(FoldLoss, PassesGradcheckInF64OnRefAndCpu) {
  for (int64_t bins : {0, 5}) {
    for (const char* backend : {"ref", "cpu"}) {
      SCOPED_TRACE(std::string(backend) + " bins " + std::to_string(bins));
      autodiff::GradcheckOptions g;
      g.backend = backend;
      g.wrt = {0};
      g.fixed_inputs[1] = labels_of(2, 4);
      autodiff::GradcheckReport r = autodiff::gradcheck(*loss_module(2, 4, bins, 6), g);
      ASSERT_EQ(r.inputs.size(), 1u);
      EXPECT_TRUE(r.ok) << r.str();
    }
  }
}

}  // namespace
}  // namespace netspec::tasks::fold
