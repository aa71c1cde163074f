// DETR's bipartite matching on the host: before each detrSet train step the predictions of a
// forward pass are matched to each image's ground-truth boxes by a minimum-cost assignment
// (Hungarian algorithm), cost = -p(class) + 5·L1(box) - 2·GIoU(box) as in DETR's
// HungarianMatcher, and written as the per-query targets the in-graph loss reads (detr.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace netspec::losses {

// Minimum-cost assignment of a rows x cols cost matrix (row-major) as scipy's
// linear_sum_assignment: min(rows, cols) pairs, each row and column used at most once; returns
// each row's column, -1 for rows left out (rows > cols).
std::vector<int> linear_sum_assignment(const std::vector<double>& cost, int rows, int cols);

struct DetrBox {
  int cls = 0;                          // in [0, K)
  double cx = 0, cy = 0, w = 0, h = 0;  // [0, 1] image units
};

// GIoU of two (cx, cy, w, h) boxes.
double giou(const DetrBox& a, const DetrBox& b);
// Cost [targets, Q] of query q predicting target j, from one image's rows pred [Q, K + 5].
std::vector<double> detr_match_cost(const Tensor& pred_rows, const std::vector<DetrBox>& targets);
// detrSet labels [B, Q, 5] (dtype of pred) from pred [B, Q, K + 5] and each image's targets:
// matched queries get (class, box), the others (K, 0.5, 0.5, 1, 1). More targets than queries
// fails.
Tensor detr_targets(const Tensor& pred, const std::vector<std::vector<DetrBox>>& targets);

}  // namespace netspec::losses
