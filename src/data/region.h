// Decoding only the part of an image a sample view needs. A JPEG is decoded through libjpeg-
// turbo's partial decoding: jpeg_skip_scanlines to the window's first row, jpeg_crop_scanline to
// its columns, no rows after it, and with DCT scaling (scale_denom 2, 4 or 8: libjpeg's reduced
// IDCT) when the window keeps at least the requested resolution. PNGs, and JPEGs whose partial
// decode cannot be trusted (no end-of-image marker after the window: a truncated file), are
// decoded whole. Without scaling the window's pixels equal the same pixels of a full decode
// (tests/data/region_test.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace netspec::data {

// What the caller needs of an ih x iw image: the window [top, top + height) x [left, left +
// width) in full-resolution pixels, and the size it will be resized to (out_h x out_w; 0: no DCT
// scaling). The largest 1/2^k (k <= 3) with height >= out_h·2^k and width >= out_w·2^k is used.
struct RegionRequest {
  int64_t top = 0, left = 0, height = 0, width = 0;
  int64_t out_h = 0, out_w = 0;
};
using RegionChooser = std::function<RegionRequest(int64_t ih, int64_t iw)>;

// Decoded pixels around the requested window. Coordinates are those of the image scaled by
// 1/denom (libjpeg's scaled size: full_h = ceil(ih / denom)); pixel (y, x) of the buffer, for
// oy <= y < oy + h and ox <= x < ox + w, channel c, is at at(y, x)[c·cs].
struct Region {
  int denom = 1;
  int64_t image_h = 0, image_w = 0;  // the whole image at full resolution
  int64_t full_h = 0, full_w = 0;    // the whole image at this scale
  int64_t oy = 0, ox = 0, h = 0, w = 0;
  int64_t ys = 0, xs = 0, cs = 0;  // strides of the buffer (bytes)
  int channels = 3;
  const uint8_t* px = nullptr;  // pixel (oy, ox), channel 0
  RegionRequest request;        // as chosen, in full-resolution pixels
  // Decoded bytes (not zero-filled; kept across reuses of the Region to save the allocation).
  std::unique_ptr<uint8_t[]> buf;
  size_t buf_size = 0;
  uint8_t* scratch(size_t n) {
    if (n > buf_size) buf.reset(new uint8_t[n]), buf_size = n;
    return buf.get();
  }
  Tensor keep;  // a whole decode (PNG) or a stored image the region points into
  const uint8_t* at(int64_t y, int64_t x) const { return px + (y - oy) * ys + (x - ox) * xs; }
};

// The file's bytes (JPEG or PNG; `path` names it in errors) decoded to cover choose(ih, iw)'s
// window. dct_scale false: always full resolution.
void decode_region(const std::string& bytes, const std::string& path, const RegionChooser& choose,
                   bool dct_scale, Region& out);
// An image already decoded, ui8 [C, H, W] (C 1 or 3): the whole of it, window chosen the same.
void stored_region(const Tensor& chw, const RegionChooser& choose, Region& out);
void stored_region(const uint8_t* chw, int64_t c, int64_t h, int64_t w, const RegionChooser& choose,
                   Region& out);

}  // namespace netspec::data
