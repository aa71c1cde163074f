// AlphaFold 2's metrics on the host (fold_metrics.h).
#include "tasks/fold/fold_metrics.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace netspec::tasks::fold {
namespace {

// R_iᵀ(t_j - t_i) of frame i and point t_j.
std::array<double, 3> local(const Frame& fi, const Frame& fj) {
  std::array<double, 3> out{};
  for (int c = 0; c < 3; ++c)
    for (int a = 0; a < 3; ++a)
      out[size_t(c)] += fi[size_t(3 * a + c)] * (fj[size_t(9 + a)] - fi[size_t(9 + a)]);
  return out;
}

double dist(const Frame& a, const Frame& b) {
  double s = 0;
  for (int k = 9; k < 12; ++k) s += (a[size_t(k)] - b[size_t(k)]) * (a[size_t(k)] - b[size_t(k)]);
  return std::sqrt(s);
}

void check_sizes(const std::vector<Frame>& pred, const std::vector<Frame>& truth,
                 const std::vector<double>& mask) {
  if (pred.size() != truth.size() || mask.size() != truth.size())
    fail("fold", "predicted {}, true {} and mask {} residues differ", pred.size(), truth.size(),
         mask.size());
}

}  // namespace

double fape(const std::vector<Frame>& pred, const std::vector<Frame>& truth,
            const std::vector<double>& mask, double clamp, double eps) {
  check_sizes(pred, truth, mask);
  double num = 0, den = 0;
  for (size_t i = 0; i < truth.size(); ++i)
    for (size_t j = 0; j < truth.size(); ++j) {
      const double w = mask[i] * mask[j];
      if (w == 0) continue;
      const std::array<double, 3> p = local(pred[i], pred[j]), t = local(truth[i], truth[j]);
      const double d2 = (p[0] - t[0]) * (p[0] - t[0]) + (p[1] - t[1]) * (p[1] - t[1]) +
                        (p[2] - t[2]) * (p[2] - t[2]);
      num += w * std::min(std::sqrt(d2 + eps), clamp);
      den += w;
    }
  return num / std::max(den, 1.0);
}

double lddt_ca(const std::vector<Frame>& pred, const std::vector<Frame>& truth,
               const std::vector<double>& mask, double cutoff) {
  check_sizes(pred, truth, mask);
  double score = 0, pairs = 0;
  for (size_t i = 0; i < truth.size(); ++i)
    for (size_t j = 0; j < truth.size(); ++j) {
      if (i == j || mask[i] * mask[j] == 0) continue;
      const double dt = dist(truth[i], truth[j]);
      if (dt >= cutoff) continue;
      const double e = std::abs(dt - dist(pred[i], pred[j]));
      score += 0.25 * (double(e < 0.5) + double(e < 1) + double(e < 2) + double(e < 4));
      pairs += 1;
    }
  return pairs > 0 ? 100 * score / pairs : 100;
}

int64_t distogram_bin(double d, int64_t bins) {
  constexpr double kFirst = 2.3125, kLast = 21.6875;
  const double step = bins > 2 ? (kLast - kFirst) / double(bins - 2) : 0;
  int64_t k = 0;
  // d² against the squared edges, as the loss compares them
  while (k < bins - 1 && d * d > (kFirst + step * double(k)) * (kFirst + step * double(k))) ++k;
  return k;
}

double distogram_ce(const std::vector<double>& logits, int64_t bins,
                    const std::vector<Frame>& truth, const std::vector<double>& mask) {
  const size_t n = truth.size();
  if (bins < 2 || logits.size() != n * n * size_t(bins))
    fail("fold", "distogram logits hold {} values (expected {} x {} x {} bins)", logits.size(), n,
         n, bins);
  double num = 0, den = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      const double w = mask[i] * mask[j];
      if (w == 0) continue;
      const double* z = logits.data() + (i * n + j) * size_t(bins);
      const double mx = *std::max_element(z, z + bins);
      double s = 0;
      for (int64_t k = 0; k < bins; ++k) s += std::exp(z[k] - mx);
      const int64_t k = distogram_bin(dist(truth[i], truth[j]), bins);
      num += w * (mx + std::log(s) - z[k]);
      den += w;
    }
  return num / std::max(den, 1.0);
}

std::vector<Frame> frames_at(const Tensor& t, int64_t i) {
  const int64_t n = t.shape().at(1), f = t.shape().at(2);
  std::vector<Frame> out(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r)
    for (int k = 0; k < 12; ++k) out[size_t(r)][size_t(k)] = t.data<float>()[(i * n + r) * f + k];
  return out;
}

ChainScores score_chain(const Tensor& out, const Tensor& y, int64_t i) {
  const int64_t n = out.shape().at(1), f = out.shape().at(2), bins = (f - 12) / n;
  const std::vector<Frame> pred = frames_at(out, i), truth = frames_at(y, i);
  std::vector<double> mask(static_cast<size_t>(n)), logits;
  for (int64_t r = 0; r < n; ++r) {
    mask[size_t(r)] = y.data<float>()[(i * n + r) * 13 + 12];
    const float* p = out.data<float>() + (i * n + r) * f;
    logits.insert(logits.end(), p + 12, p + f);
  }
  ChainScores s;
  s.fape = fape(pred, truth, mask);
  s.lddt = lddt_ca(pred, truth, mask);
  if (bins > 0) s.dist_ce = distogram_ce(logits, bins, truth, mask);
  s.loss = fape(pred, truth, mask, 10, 1e-4) / 10 + 0.3 * s.dist_ce;
  return s;
}

}  // namespace netspec::tasks::fold
