// Whole-image segmentation by sliding windows (mmsegmentation's "slide" inference): the image is
// resized to cover the net's input (the evaluation transform before its centre crop), windows of
// the input size step over it by 2/3 of a window (the last one flush with the edge), the logits
// of overlapping windows are averaged, and the averaged logits are upsampled bilinearly to the
// image's own size, where the argmax is the mask. A square image the size of the input is one
// window: its mask is the evaluation's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "report/canvas.h"
#include "spec/enums.h"
#include "train/evaluate.h"

namespace netspec::viz {

// Window starts along an axis of `length` for windows of `window` (length >= window).
std::vector<int64_t> slide_starts(int64_t length, int64_t window);
// Mean of window logits f32 [n, C, h, w] placed at (ys[i], xs[i]) over a [C, H, W] field.
Tensor stitch_windows(const Tensor& windows, const std::vector<int64_t>& ys,
                      const std::vector<int64_t>& xs, int64_t height, int64_t width);
// Bilinear resize of f32 [C, h, w] to [C, H, W] (half-pixel centres, edges clamped).
Tensor upsample_bilinear(const Tensor& field, int64_t height, int64_t width);

struct FullMask {
  int64_t height = 0, width = 0;  // the image's own size
  std::vector<int32_t> mask;      // argmax class per pixel at that size
  report::RgbImage picture;       // the image at the covering size, for panels
  std::vector<int32_t> picture_mask;
};
// Segments the image at `path` (JPEG/PNG; a .npy input is one window at the input size) with the
// eval module `ev`; `in` is the net's input shape [C, H, W], `kind` its normalisation.
FullMask segment_whole_image(const train::Evaluator& ev, const std::vector<Tensor>& params,
                             const std::vector<Tensor>& running, const std::string& path,
                             const Shape& in, DatasetKind kind);

}  // namespace netspec::viz
