// Sample views: how a decoded image (or the window of it that region.h decoded) becomes one row
// of a batch, in one fused pass: PIL's antialiased bilinear resize (resample.h), the horizontal
// flip, rounding to bytes as PIL's 8-bit images, then ToTensor + Normalize through a 256-entry
// table per channel, written straight into the batch tensor (or kept as bytes for RandAugment).
//   random_resized_crop: torchvision's RandomResizedCrop(size, scale, ratio) geometry: up to 10
//     tries of area·U(scale) at aspect exp(U(log ratio)), w = round(sqrt(a·r)), h = round(
//     sqrt(a / r)), kept when it fits, at top U{0..H-h}, left U{0..W-w}; else the centre crop
//     clamped to the ratio range. Draws come from a 64-bit key (seed, epoch, sample index), so a
//     sample gets the same window whichever path (in RAM, streamed) or thread reads it. The crop
//     is then resized alone (taps never read outside it), as F.resized_crop.
//   cover: Resize(shorter side) + CenterCrop (resize_center_crop's geometry, crop_ratio).
// With DCT scaling (Region::denom > 1) the same boxes are taken in the scaled image's
// coordinates, so the result approximates the full-resolution one within the resize tolerance.
#pragma once
#include <cstdint>

#include "data/region.h"
#include "data/resample.h"

namespace netspec::data {

struct RrcParams {
  double scale_min = 0.08, scale_max = 1.0;
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;
};
struct CropWindow {
  int64_t top = 0, left = 0, height = 0, width = 0;
};
CropWindow rrc_window(uint64_t key, int64_t ih, int64_t iw, const RrcParams& p = {});

// Region choosers (what to decode) for an out_h x out_w view.
RegionChooser rrc_chooser(uint64_t key, const RrcParams& p, int64_t out_h, int64_t out_w);
RegionChooser cover_chooser(int64_t out_h, int64_t out_w, double crop_ratio);

// The taps of each view in the region's (scaled) pixel coordinates.
void rrc_taps(const Region& r, int64_t out_h, int64_t out_w, Taps& ty, Taps& tx);
void cover_taps(const Region& r, int64_t out_h, int64_t out_w, double crop_ratio, Taps& ty,
                Taps& tx);

// The fused pass: region through (ty, tx) to out_c x H x W (H = ty outputs, W = tx outputs;
// out_c 1 from RGB averages the rounded bytes as rgb_to_gray), mirrored left-right when flip.
// lut != nullptr: f32 rows, value lut[c·256 + byte]; else bytes into dst8.
void render_view(const Region& r, const Taps& ty, const Taps& tx, int64_t out_c, bool flip,
                 const float* lut, float* dst, uint8_t* dst8);

}  // namespace netspec::data
