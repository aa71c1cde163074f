// Segmentation scores over every pixel of a split, from the confusion matrix of argmax
// predictions: per-class IoU = TP / (TP + FP + FN), Dice = 2 TP / (2 TP + FP + FN), their means
// over the classes present (in labels or predictions; an absent class scores NaN and is left out
// of the mean), pixel accuracy, and the mean per-pixel cross-entropy.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace netspec::train {

struct EvalMetrics;

struct SegScorer {
  int64_t classes = 0;
  std::vector<int64_t> confusion;  // [label · classes + prediction]
  double loss_sum = 0;
  int64_t count = 0;
  // logits f32 [B, C, H, W] against labels i32 [B, H, W]; the first n samples count.
  void add(const Tensor& logits, const Tensor& labels, int64_t n) {
    loss_sum += score(logits, labels, n);
  }
  // Adds the batch's confusion counts and returns its loss sum (not added to loss_sum), so a
  // split evaluation can fold the batch sums in batch order as one process does.
  double score(const Tensor& logits, const Tensor& labels, int64_t n);
  // Fills m's seg fields (and top1 = pixel accuracy, loss, count).
  void fill(EvalMetrics& m) const;
};

}  // namespace netspec::train
