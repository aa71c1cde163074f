// Detection training glue: the label layout a detector's loss wants (from the net and the
// TrainConfig), the per-epoch training set (box-aware augmentation, then target assignment), and
// evaluation on the eval module (decode, per-class NMS, VOC / COCO mAP).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/det_data.h"
#include "spec/param_table.h"
#include "spec/train_config.h"
#include "tasks/detection/detection.h"
#include "train/evaluate.h"

namespace netspec::train {

struct DetTargets {
  LossKind kind = LossKind::yoloAnchor;
  data::AnchorSpec anchors;  // yoloAnchor
  int64_t classes = 0;
  int64_t gh = 0, gw = 0;  // yolov1Masked grid
  bool diou = false;
  int64_t height = 0, width = 0;  // the net's input
  int64_t queries = 0;            // detrSet: detrHeads rows [Q, K + 5]
};
// yoloAnchor: anchors / fpnScales of c with the head's anchor count and classes (oc - 5);
// yolov1Masked: the net's output [5 + K, gH, gW]; detrSet: detrHeads rows [Q, K + 5]. Other
// losses are refused.
DetTargets det_targets(const NetSpec& net, const ParamTable& t, const TrainConfig& c);
// Labels f32 [N, ...] (the loss's per-sample label shape) for N images' boxes. detrSet: the
// boxes themselves, rows [Q, 5] = (class, cx, cy, w, h in [0, 1]), class -1 past the last box;
// detr_match_labels turns them into the loss's matched targets before each step.
Tensor assign_targets(const DetTargets& d, const std::vector<std::vector<data::Box>>& boxes);
// The training set of one epoch: c.augment flips each image with p 0.5 (seeded by seed, epoch),
// fpnAffine* applies the scale / translate with its drop rule; then the targets are assigned.
data::Dataset det_epoch(const data::DetImages& train, const DetTargets& d, const TrainConfig& c,
                        uint64_t seed, int epoch);

// detrSet (detr_train.cpp): the matched per-query targets [n, Q, 5] of n images x [n, ...] whose
// boxes are `boxes` [n, Q, 5] (assign_targets' rows), from the eval module's predictions under
// `params` (DETR's HungarianMatcher on the host, losses/detr_match.h).
Tensor detr_match_labels(const Evaluator& ev, const std::vector<Tensor>& params,
                         const std::vector<Tensor>& running, const Tensor& x, const Tensor& boxes);
// One image's detrHeads rows [Q, K + 5] as detections: per query the best real class of
// softmax(K + 1 logits), score its probability, box (cx, cy, w, h)·(W, H) (no NMS, as DETR).
std::vector<Detection> decode_detr(const Tensor& rows, int64_t img_w, int64_t img_h,
                                   double min_score, int64_t image = 0);

struct NmsOptions {
  double iou = 0.5, score = 0.01;
  int64_t max_det = 100;
};
// One sample's detections from its net output (logits [N, 5 + K] rows or a [5 + K, gH, gW] grid).
std::vector<Detection> decode_output(const DetTargets& d, const Tensor& out, const NmsOptions& o,
                                     int64_t image);
// Runs the eval module over `images` (batch of the evaluator) and decodes every sample. With a
// split each rank runs its batches and the detections of every rank are gathered in image order:
// every rank returns the list one process makes.
std::vector<Detection> detect(const Evaluator& ev, const std::vector<Tensor>& params,
                              const std::vector<Tensor>& running, const data::Dataset& images,
                              const DetTargets& d, const NmsOptions& o,
                              const RankSplit& split = {});
DetMetrics evaluate_det(const Evaluator& ev, const std::vector<Tensor>& params,
                        const std::vector<Tensor>& running, const data::Dataset& test_images,
                        const data::DetImages& test, const DetTargets& d,
                        const RankSplit& split = {});

}  // namespace netspec::train
