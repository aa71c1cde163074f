// PIL-semantics image ops on one uint8 image [C, H, W] (C = 1 or 3), the op set of RandAugment /
// AutoAugment (timm's auto_augment.py and torchvision's functional ops call PIL for these):
//   brightness/contrast/color/sharpness f: PIL ImageEnhance, out = trunc(d + f·(x - d)) clipped,
//     d the degenerate image: black / the rounded mean of the L image / the L image / the 3x3
//     SMOOTH filter (border pixels kept)
//   posterize b: x & ~(2^(8-b) - 1); solarize t: x >= t ? 255 - x : x; solarize_add a (t 128):
//     x < t ? min(x + a, 255) : x; invert: 255 - x
//   autocontrast: per channel lo..hi stretched to 0..255 (identity when hi <= lo)
//   equalize: PIL ImageOps.equalize's per-channel histogram LUT
//   affine (rotate about the centre, shear, translate): PIL Image.transform AFFINE with NEAREST:
//     output pixel (x, y) reads input (trunc(a(x+½) + b(y+½) + c), trunc(d(x+½) + e(y+½) + f)),
//     `fill` outside. L = (19595 R + 38470 G + 7471 B + 2^15) >> 16 (PIL's convert("L")).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

namespace netspec::data {

struct Image8 {
  int64_t c = 0, h = 0, w = 0;
  std::vector<uint8_t> px;  // [c, h, w]
  uint8_t& at(int64_t ch, int64_t y, int64_t x) { return px[(ch * h + y) * w + x]; }
  uint8_t at(int64_t ch, int64_t y, int64_t x) const { return px[(ch * h + y) * w + x]; }
};

Image8 brightness(const Image8& im, double f);
Image8 contrast(const Image8& im, double f);
Image8 color(const Image8& im, double f);
Image8 sharpness(const Image8& im, double f);
Image8 posterize(const Image8& im, int bits);
Image8 solarize(const Image8& im, int threshold);
Image8 solarize_add(const Image8& im, int add, int threshold = 128);
Image8 invert(const Image8& im);
Image8 autocontrast(const Image8& im);
Image8 equalize(const Image8& im);
// m = (a, b, c, d, e, f): output -> input map as PIL's AFFINE data.
Image8 affine(const Image8& im, const std::array<double, 6>& m, uint8_t fill);
// PIL Image.rotate(deg) (counter-clockwise, about (W/2, H/2), same size).
Image8 rotate(const Image8& im, double degrees, uint8_t fill);
// timm's shear_x / shear_y / translate_x_abs / translate_y_abs.
Image8 shear_x(const Image8& im, double m, uint8_t fill);
Image8 shear_y(const Image8& im, double m, uint8_t fill);
Image8 translate_x(const Image8& im, double pixels, uint8_t fill);
Image8 translate_y(const Image8& im, double pixels, uint8_t fill);

}  // namespace netspec::data
