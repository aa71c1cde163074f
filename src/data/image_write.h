// Image files written by the data synthesisers: RGB JPEG (libjpeg) and 8-bit grayscale PNG
// (libpng), e.g. Oxford-IIIT Pets images and trimaps. Errors name the file.
#pragma once
#include <string>

#include "core/tensor.h"

namespace netspec::data {

// ui8 [3, H, W] -> baseline JPEG at `quality` (1..100).
void write_jpeg(const std::string& path, const Tensor& rgb, int quality = 90);
// The same JPEG as bytes in memory.
std::string encode_jpeg(const Tensor& rgb, int quality = 90);
// ui8 [H, W] -> 8-bit grayscale PNG; ui8 [3, H, W] -> 8-bit RGB PNG.
void write_png_gray(const std::string& path, const Tensor& gray);
void write_png_rgb(const std::string& path, const Tensor& rgb);

}  // namespace netspec::data
