// Segmentation scores (see seg_metrics.h).
#include "tasks/segmentation/seg_metrics.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "train/evaluate.h"

namespace netspec::train {

double SegScorer::score(const Tensor& logits, const Tensor& labels, int64_t n) {
  const Shape& ls = logits.shape();
  if (ls.size() != 4 || labels.rank() != 3 || labels.shape()[0] != ls[0] ||
      labels.shape()[1] != ls[2] || labels.shape()[2] != ls[3])
    fail("eval",
         "segmentation logits {} do not match labels {} (expected [B, C, H, W] and "
         "[B, H, W])",
         logits.type_str(), labels.type_str());
  const int64_t c = ls[1], hw = ls[2] * ls[3];
  if (classes == 0) {
    classes = c;
    confusion.assign(size_t(c * c), 0);
  }
  const float* l = logits.data<float>();
  const int32_t* y = labels.data<int32_t>();
  double batch_loss = 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < hw; ++i) {
      const float* z = l + b * c * hw + i;  // channel j at z[j·hw]
      int64_t arg = 0;
      for (int64_t j = 1; j < c; ++j)
        if (z[j * hw] > z[arg * hw]) arg = j;
      const int32_t t = y[b * hw + i];
      if (t < 0 || t >= c)
        fail("eval", "pixel label out of range (got {}, expected 0..{})", t, c - 1);
      double s = 0;
      for (int64_t j = 0; j < c; ++j) s += std::exp(double(z[j * hw] - z[arg * hw]));
      batch_loss += std::log(s) - double(z[t * hw] - z[arg * hw]);
      ++confusion[size_t(t * c + arg)];
    }
  count += n * hw;
  return batch_loss;
}

void SegScorer::fill(EvalMetrics& m) const {
  m.seg = true;
  m.count = count;
  m.iou.assign(size_t(classes), std::numeric_limits<double>::quiet_NaN());
  m.class_dice = m.iou;
  if (count == 0) return;
  m.loss = loss_sum / double(count);
  int64_t correct = 0, present = 0;
  double iou_sum = 0, dice_sum = 0;
  for (int64_t k = 0; k < classes; ++k) {
    const int64_t tp = confusion[size_t(k * classes + k)];
    int64_t fp = 0, fn = 0;
    for (int64_t j = 0; j < classes; ++j)
      if (j != k) {
        fp += confusion[size_t(j * classes + k)];
        fn += confusion[size_t(k * classes + j)];
      }
    correct += tp;
    if (tp + fp + fn == 0) continue;
    m.iou[size_t(k)] = double(tp) / double(tp + fp + fn);
    m.class_dice[size_t(k)] = 2.0 * double(tp) / double(2 * tp + fp + fn);
    iou_sum += m.iou[size_t(k)];
    dice_sum += m.class_dice[size_t(k)];
    ++present;
  }
  m.top1 = double(correct) / double(count);
  m.miou = present ? iou_sum / double(present) : 0;
  m.dice = present ? dice_sum / double(present) : 0;
}

}  // namespace netspec::train
