// detrSet training on detection data (det_train.h): host Hungarian matching of the current
// predictions before each step, and DETR's decoding for evaluation.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "losses/detr_match.h"
#include "tasks/detection/det_train.h"

namespace netspec::train {

Tensor detr_match_labels(const Evaluator& ev, const std::vector<Tensor>& params,
                         const std::vector<Tensor>& running, const Tensor& x, const Tensor& boxes) {
  const int64_t n = x.shape().at(0), full = ev.batch();
  if (boxes.rank() != 3 || boxes.shape()[0] != n || boxes.shape()[2] != 5)
    fail("detr matching", "box rows must be [{}, Q, 5] (got {})", n, boxes.type_str());
  if (n > full) fail("detr matching", "{} images in a batch of {}", n, full);
  Shape xs = x.shape();
  xs[0] = full;  // the eval module's batch: a short tail is zero-padded
  Tensor xp(x.dtype(), xs);
  std::memcpy(xp.raw(), x.raw(), x.nbytes());
  const Tensor out = ev.logits(params, running, xp);  // [full, Q, K + 5]
  Shape ps = out.shape();
  ps[0] = n;
  Tensor pred(out.dtype(), ps);
  std::memcpy(pred.raw(), out.raw(), pred.nbytes());
  const int64_t q = boxes.shape()[1];
  std::vector<std::vector<losses::DetrBox>> targets(static_cast<size_t>(n));
  const float* r = boxes.data<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < q; ++j) {
      const float* b = r + (i * q + j) * 5;
      if (b[0] < 0) continue;  // padding
      targets[size_t(i)].push_back({static_cast<int>(std::lround(b[0])), b[1], b[2], b[3], b[4]});
    }
  return losses::detr_targets(pred, targets);
}

std::vector<Detection> decode_detr(const Tensor& rows, int64_t img_w, int64_t img_h,
                                   double min_score, int64_t image) {
  const int64_t q = rows.shape().at(0), k = rows.shape().at(1) - 5;  // K + 1 logits, 4 box
  std::vector<Detection> out;
  for (int64_t i = 0; i < q; ++i) {
    auto v = [&](int64_t j) { return rows.as_double(i * (k + 5) + j); };
    double mx = v(0);
    for (int64_t j = 1; j <= k; ++j) mx = std::max(mx, v(j));
    double z = 0;
    for (int64_t j = 0; j <= k; ++j) z += std::exp(v(j) - mx);
    int64_t best = 0;
    for (int64_t j = 1; j < k; ++j)
      if (v(j) > v(best)) best = j;
    const double score = std::exp(v(best) - mx) / z;
    if (score < min_score) continue;
    const double cx = v(k + 1) * double(img_w), cy = v(k + 2) * double(img_h);
    const double w = v(k + 3) * double(img_w), h = v(k + 4) * double(img_h);
    Detection d;
    d.image = image;
    d.box = {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, static_cast<int>(best)};
    d.score = score;
    out.push_back(d);
  }
  return out;
}

}  // namespace netspec::train
