// Hungarian matching for DETR (detr_match.h).
#include "losses/detr_match.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace netspec::losses {

std::vector<int> linear_sum_assignment(const std::vector<double>& cost, int rows, int cols) {
  if (rows < 0 || cols < 0 || cost.size() != size_t(rows) * size_t(cols))
    fail("linear_sum_assignment", "cost size (got {}, expected {} x {})", cost.size(), rows, cols);
  if (rows > cols) {  // solve the transpose, then invert
    std::vector<double> t(cost.size());
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) t[size_t(j) * rows + i] = cost[size_t(i) * cols + j];
    std::vector<int> colrow = linear_sum_assignment(t, cols, rows);
    std::vector<int> out(rows, -1);
    for (int j = 0; j < cols; ++j) out[colrow[j]] = j;
    return out;
  }
  // Kuhn–Munkres with potentials u (rows), v (cols), 1-based, shortest augmenting paths:
  // O(rows² · cols). p[j]: the row matched to column j (0: none).
  const double inf = std::numeric_limits<double>::infinity();
  const int n = rows, m = cols;
  std::vector<double> u(n + 1, 0), v(m + 1, 0);
  std::vector<int> p(m + 1, 0), way(m + 1, 0);
  for (int i = 1; i <= n; ++i) {
    p[0] = i;
    int j0 = 0;
    std::vector<double> minv(m + 1, inf);
    std::vector<char> used(m + 1, 0);
    do {
      used[j0] = 1;
      int i0 = p[j0], j1 = 0;
      double delta = inf;
      for (int j = 1; j <= m; ++j) {
        if (used[j]) continue;
        double cur = cost[size_t(i0 - 1) * m + (j - 1)] - u[i0] - v[j];
        if (cur < minv[j]) minv[j] = cur, way[j] = j0;
        if (minv[j] < delta) delta = minv[j], j1 = j;
      }
      for (int j = 0; j <= m; ++j) {
        if (used[j])
          u[p[j]] += delta, v[j] -= delta;
        else
          minv[j] -= delta;
      }
      j0 = j1;
    } while (p[j0] != 0);
    do {  // augment along the path
      int j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0);
  }
  std::vector<int> out(n, -1);
  for (int j = 1; j <= m; ++j)
    if (p[j]) out[p[j] - 1] = j - 1;
  return out;
}

double giou(const DetrBox& a, const DetrBox& b) {
  double ax0 = a.cx - a.w / 2, ax1 = a.cx + a.w / 2, ay0 = a.cy - a.h / 2, ay1 = a.cy + a.h / 2;
  double bx0 = b.cx - b.w / 2, bx1 = b.cx + b.w / 2, by0 = b.cy - b.h / 2, by1 = b.cy + b.h / 2;
  double iw = std::max(0.0, std::min(ax1, bx1) - std::max(ax0, bx0));
  double ih = std::max(0.0, std::min(ay1, by1) - std::max(ay0, by0));
  double inter = iw * ih, uni = a.w * a.h + b.w * b.h - inter;
  double encl =
      (std::max(ax1, bx1) - std::min(ax0, bx0)) * (std::max(ay1, by1) - std::min(ay0, by0));
  return inter / uni - (encl - uni) / encl;
}

std::vector<double> detr_match_cost(const Tensor& pred_rows, const std::vector<DetrBox>& targets) {
  const Shape& s = pred_rows.shape();
  if (s.size() != 2 || s[1] < 6)
    fail("detr matching", "predictions must be rows [Q, K + 5] (got {})", shape_str(s));
  const int64_t q = s[0], k = s[1] - 5;
  std::vector<double> cost(targets.size() * size_t(q));
  for (int64_t i = 0; i < q; ++i) {
    auto at = [&](int64_t c) { return pred_rows.as_double(i * s[1] + c); };
    double mx = -std::numeric_limits<double>::infinity(), z = 0;
    for (int64_t c = 0; c <= k; ++c) mx = std::max(mx, at(c));
    for (int64_t c = 0; c <= k; ++c) z += std::exp(at(c) - mx);
    DetrBox p{0, at(k + 1), at(k + 2), at(k + 3), at(k + 4)};
    for (size_t j = 0; j < targets.size(); ++j) {
      const DetrBox& t = targets[j];
      if (t.cls < 0 || t.cls >= k)
        fail("detr matching", "target class (got {}, expected 0..{})", t.cls, k - 1);
      double prob = std::exp(at(t.cls) - mx) / z;
      double l1 =
          std::abs(p.cx - t.cx) + std::abs(p.cy - t.cy) + std::abs(p.w - t.w) + std::abs(p.h - t.h);
      cost[j * size_t(q) + size_t(i)] = -prob + 5 * l1 - 2 * giou(p, t);
    }
  }
  return cost;
}

Tensor detr_targets(const Tensor& pred, const std::vector<std::vector<DetrBox>>& targets) {
  const Shape& s = pred.shape();
  if (s.size() != 3 || s[2] < 6 || int64_t(targets.size()) != s[0])
    fail("detr matching", "predictions [B, Q, K + 5] for {} images (got {})", targets.size(),
         shape_str(s));
  const int64_t q = s[1], k = s[2] - 5;
  Tensor out(pred.dtype(), {s[0], q, 5});
  auto set = [&](int64_t i, double v) {
    if (out.dtype() == DType::kF64)
      out.data<double>()[i] = v;
    else
      out.data<float>()[i] = static_cast<float>(v);
  };
  for (int64_t b = 0; b < s[0]; ++b) {
    const auto& t = targets[size_t(b)];
    if (int64_t(t.size()) > q)
      fail("detr matching", "image {} has more boxes than queries (got {}, expected <= {})", b,
           t.size(), q);
    for (int64_t i = 0; i < q; ++i) {
      const double row[5] = {double(k), 0.5, 0.5, 1, 1};
      for (int c = 0; c < 5; ++c) set((b * q + i) * 5 + c, row[c]);
    }
    Tensor rows(pred.dtype(), {q, s[2]});
    std::copy_n(static_cast<const char*>(pred.raw()) + b * rows.nbytes(), rows.nbytes(),
                static_cast<char*>(rows.raw()));
    std::vector<int> match = linear_sum_assignment(detr_match_cost(rows, t), int(t.size()), int(q));
    for (size_t j = 0; j < t.size(); ++j) {
      const double row[5] = {double(t[j].cls), t[j].cx, t[j].cy, t[j].w, t[j].h};
      for (int c = 0; c < 5; ++c) set((b * q + match[j]) * 5 + c, row[c]);
    }
  }
  return out;
}

}  // namespace netspec::losses
