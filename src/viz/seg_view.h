// Looking at a segmentation run: predicted class maps, the maps as colour pictures (one colour per
// class, tab10's) drawn over the image with a legend of class names, image | truth | prediction
// panels, and the report page's section (mIoU, Dice, pixel accuracy, per-class IoU under the
// class names, sample panels and the worst-IoU images).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/dataset.h"
#include "exec/backend.h"
#include "report/canvas.h"
#include "report/progress.h"
#include "train/evaluate.h"
#include "viz/model.h"

namespace netspec::viz {

// Class k's colour (tab10, repeating past 10 classes).
report::Rgb class_colour(int64_t k);
// The argmax class of every pixel of logits f32 [B, C, H, W] (first n samples): i32 [n, H, W].
Tensor argmax_masks(const Tensor& logits, int64_t n);
// `img` with the class colours of `mask` (i32 H x W at img's size) blended over it (alpha 0..1).
report::RgbImage mask_overlay(const report::RgbImage& img, const int32_t* mask, double alpha);
// The class colours of a mask alone.
report::RgbImage mask_picture(const int32_t* mask, int w, int h);
// Draws the legend (a colour square and the name per class) at (x, y) in rows `width` px wide;
// returns its height. With no canvas only the height is measured.
double draw_legend(const report::Canvas* c, const std::vector<std::string>& names, double x,
                   double y, double width);

// One picture row: image | truth | prediction, captioned.
struct SegPanel {
  report::RgbImage image;
  const int32_t* truth = nullptr;  // may be null (predict: no truth known)
  const int32_t* pred = nullptr;
  std::string caption;
};
// Rows of panels (`cell` px per picture) with the legend under them, as PNG bytes.
std::string seg_panels_png(const std::vector<SegPanel>& rows, const std::vector<std::string>& names,
                           int cell = 160);

// A split scored by the eval module: the whole split's metrics (as training's evaluation computes
// them) and every sample's predicted map.
struct SegScored {
  train::EvalMetrics metrics;
  Tensor masks;  // i32 [N, H, W]
  double seconds = 0;
};
// The evaluation's progress goes to `log` (report::EvalProgress, running pixel accuracy).
SegScored score_segmentation(const Model& m, const data::Dataset& ds, exec::Backend& be,
                             const report::EvalLog& log = {});

// The report's evaluation sections of a segmentation run (ids evaluation, per-class, samples,
// worst); `shown` images in the sample and worst-IoU panels each.
std::string seg_report_sections(const Model& m, const data::Dataset& ds, const std::string& what,
                                const SegScored& s, int shown);

}  // namespace netspec::viz
