// Detection on the host: boxes, their assignment to loss targets, and box-aware augmentation.
// Boxes are pixel corners (x0, y0, x1, y1) with a class index. Assignment writes the label
// layouts of the two detection losses (src/losses/loss.h): yolov1Masked's grid [6 + K, gH, gW]
// (target channels + cell mask) and yoloAnchor's rows [N, 6] (level, y, x, anchor order).
// Augmentations move the ui8 [3, H, W] image and its boxes by the same map.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "core/tensor.h"

namespace netspec::data {

struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // pixels, x1 > x0, y1 > y0
  int cls = 0;
  double w() const { return x1 - x0; }
  double h() const { return y1 - y0; }
  bool operator==(const Box&) const = default;
};

// IoU of two corner boxes (0 when either is empty).
double box_iou(const Box& a, const Box& b);

// YOLOv1 grid target for an image of w x h pixels: the cell (i, j) holding a box's centre gets
// x = cx·gW/w - j, y = cy·gH/h - i, w/W, h/H, conf 1, one-hot class, mask 1. Two boxes in one cell:
// the larger (area) keeps it. Returns f32 [6 + K, gH, gW] (channel-major, mask last).
Tensor assign_yolov1(const std::vector<Box>& boxes, int64_t img_w, int64_t img_h, int64_t gh,
                     int64_t gw, int64_t classes);

// Anchor rows for a head with `strides.size()` levels (finest first, grid = img / stride) and A
// anchors per cell; anchors are w,h pixel pairs, A shared by every level or L·A level by level.
struct AnchorSpec {
  std::vector<double> anchors;
  std::vector<double> strides;
  int64_t per_cell = 0;  // A (0: the number of pairs)
};
struct RowChoice {
  int64_t level = 0, y = 0, x = 0, anchor = 0, row = 0;
};
// Where a box goes: level-by-level anchors: the (level, anchor) of best shape IoU (both centred);
// shared anchors: the level by scale (the one whose 4·stride is nearest √(w·h) in log2), then
// the anchor of best shape IoU; the cell holding the centre at that level.
RowChoice choose_row(const Box& b, const AnchorSpec& s, int64_t img_w, int64_t img_h);
// Rows f32 [N, 6] = (m, x*, y*, ln(w/aw), ln(h/ah), class) for N = A·Σ_l (H/s_l)(W/s_l); a row
// claimed twice keeps the larger box.
Tensor assign_anchor_rows(const std::vector<Box>& boxes, const AnchorSpec& s, int64_t img_w,
                          int64_t img_h);

// --- Box-aware augmentation (image ui8 [3, H, W]; boxes follow exactly) ---
// Horizontal flip: x -> W - x.
void hflip(Tensor& img, std::vector<Box>& boxes);
// Drop thresholds of the seed's fpnAffineWhThrPx / fpnAffineAreaThr: a box whose clipped side is
// under wh_thr pixels or that keeps less than area_thr of its transformed area is dropped.
struct DropRule {
  double wh_thr = 2.0, area_thr = 0.1;
};
// Boxes mapped by x' = s·x + tx, y' = s·y + ty, clipped to W x H and filtered by `rule`.
std::vector<Box> map_boxes(const std::vector<Box>& boxes, double s, double tx, double ty, int64_t w,
                           int64_t h, const DropRule& rule);
// The image under the same map (nearest-neighbour sampling of the inverse map; outside: fill).
Tensor warp_scale_translate(const Tensor& img, double s, double tx, double ty, uint8_t fill);
// Crop [x0, x0 + cw) x [y0, y0 + ch) out of the image (boxes shifted, clipped, filtered).
void crop(Tensor& img, std::vector<Box>& boxes, int64_t x0, int64_t y0, int64_t cw, int64_t ch,
          const DropRule& rule);
// The seed's fpnAffine*: with probability prob, scale gain s = 1 + U(-1,1)·scale about the frame
// centre and translate U(-1,1)·translate of the frame; fill 114 (ultralytics' grey).
struct AffineAug {
  double scale = 0.5, translate = 0.1, prob = 0;
  DropRule rule;
};
void random_affine(Tensor& img, std::vector<Box>& boxes, const AffineAug& a, std::mt19937_64& rng);

}  // namespace netspec::data
