// Detection on the host after the net: decoding head outputs to scored boxes, per-class NMS, and
// the metrics: VOC mAP@0.5 (all-point interpolated AP, VOC2010+) and COCO AP@[.5:.95] / AP50
// (101 recall points, maxDets 100; pycocotools' COCOeval bbox semantics for non-crowd ground
// truth, area range "all").
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "data/det_boxes.h"

namespace netspec::train {

struct Detection {
  int64_t image = 0;
  data::Box box;  // pixels; box.cls the class
  double score = 0;
};

// yoloAnchor rows of ONE image, f32 [N, 5 + K] in the row order of `s` (level, y, x, anchor):
// centre ((x + σ(tx))·stride, (y + σ(ty))·stride), size anchor·exp(tw, th) px; score =
// σ(obj)·softmax(cls)[c] of the best class (σ(obj) when K = 0). Rows under min_score are skipped.
std::vector<Detection> decode_anchor_rows(const Tensor& rows, const data::AnchorSpec& s,
                                          int64_t img_w, int64_t img_h, double min_score,
                                          int64_t image = 0);
// yolov1Masked grid of ONE image, f32 [5 + K, gH, gW]: centre ((j + x)·W/gW, (i + y)·H/gH), size
// (w·W, h·H) (diou: σ(x), σ(y), exp(w), exp(h)); score = conf · the best class score.
std::vector<Detection> decode_yolov1(const Tensor& grid, int64_t img_w, int64_t img_h, bool diou,
                                     double min_score, int64_t image = 0);

// Per-class greedy NMS of one image's detections: score >= score_thr, then highest score first,
// dropping a box whose IoU with a kept box of its class exceeds iou_thr; at most max_det kept.
std::vector<Detection> nms(std::vector<Detection> d, double iou_thr, double score_thr,
                           int64_t max_det);

struct DetMetrics {
  double voc_map50 = 0, coco_map = 0, coco_ap50 = 0;  // means over classes with ground truth
  std::vector<double> voc_ap50, coco_ap;              // per class (-1: no ground truth)
};
// gts[i] = the boxes of image i; detections name their image by index.
DetMetrics evaluate_detections(const std::vector<Detection>& dets,
                               const std::vector<std::vector<data::Box>>& gts, int64_t classes);

}  // namespace netspec::train
