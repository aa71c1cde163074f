// Grad-CAM on the host and its picture. grad_cam_map: α_c = mean_hw ∂y_K/∂A_c (the gradient the
// grad_cam module returns), map = ReLU(Σ_c α_c · A_c) [H, W] (Selvaraju et al. 2017, as
// pytorch-grad-cam computes it, before upsampling). overlay: the map upsampled bilinearly
// (half-pixel centres) to the picture, scaled by its max to [0, 1], coloured with a jet-like map
// and alpha-blended over the picture.
#pragma once
#include <cstdint>
#include <vector>

#include "report/canvas.h"

namespace netspec::report {

// features, grads: one sample, [C, H, W] row-major.
std::vector<double> grad_cam_map(const float* features, const float* grads, int64_t c, int64_t h,
                                 int64_t w);
// Jet-like colour of v in [0, 1]: dark blue -> cyan -> yellow -> red.
Rgb jet(double v);
// The map [h, w] upsampled to img's size; v / max (0 everywhere when max <= 0).
std::vector<double> upsample_normalised(const std::vector<double>& map, int64_t h, int64_t w,
                                        int width, int height);
// Nearest-neighbour resize (small inputs shown large without blur).
RgbImage resize_nearest(const RgbImage& img, int width, int height);
// img blended with jet(map): (1 - alpha) · img + alpha · jet.
RgbImage overlay(const RgbImage& img, const std::vector<double>& map, int64_t h, int64_t w,
                 double alpha = 0.45);

}  // namespace netspec::report
