// JPEG / PNG writers (see image_write.h).
#include "data/image_write.h"

#include <png.h>
// jpeglib.h needs size_t and FILE declared first.
#include <jpeglib.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "core/error.h"

namespace netspec::data {
namespace {

struct File {
  FILE* f;
  explicit File(const std::string& path) : f(std::fopen(path.c_str(), "wb")) {
    if (!f) fail("image", "{}: cannot write", path);
  }
  ~File() {
    if (f) std::fclose(f);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
};

}  // namespace

namespace {

// ui8 [3, H, W] through libjpeg to `dest` (set up by the caller on c).
void compress_rgb(jpeg_compress_struct& c, const Tensor& rgb, int quality) {
  const int64_t h = rgb.shape()[1], w = rgb.shape()[2];
  std::vector<uint8_t> row(static_cast<size_t>(w * 3));
  c.image_width = static_cast<JDIMENSION>(w);
  c.image_height = static_cast<JDIMENSION>(h);
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, TRUE);
  jpeg_start_compress(&c, TRUE);
  const uint8_t* p = rgb.data<uint8_t>();
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x)
      for (int64_t ch = 0; ch < 3; ++ch) row[size_t(x * 3 + ch)] = p[(ch * h + y) * w + x];
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
}

void check_rgb(const std::string& what, const Tensor& rgb) {
  if (rgb.dtype() != DType::kUI8 || rgb.rank() != 3 || rgb.shape()[0] != 3 ||
      rgb.shape()[1] < 1 || rgb.shape()[2] < 1)
    fail("image", "{}: a JPEG needs ui8 [3, H, W] (got {})", what, rgb.type_str());
}

}  // namespace

void write_jpeg(const std::string& path, const Tensor& rgb, int quality) {
  check_rgb(path, rgb);
  File out(path);
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);  // libjpeg exits on error: the inputs here are checked above
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, out.f);
  compress_rgb(c, rgb, quality);
  jpeg_destroy_compress(&c);
}

std::string encode_jpeg(const Tensor& rgb, int quality) {
  check_rgb("encode_jpeg", rgb);
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buf, &size);
  compress_rgb(c, rgb, quality);
  jpeg_destroy_compress(&c);
  std::string out(reinterpret_cast<const char*>(buf), size);
  std::free(buf);
  return out;
}

namespace {

// rows[y] holds row y in libpng's layout (channels interleaved).
void write_png(const std::string& path, int64_t h, int64_t w, int color,
               const std::vector<std::vector<uint8_t>>& rows) {
  File out(path);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) fail("image", "{}: libpng init failed", path);
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    fail("image", "{}: libpng write failed", path);
  }
  png_init_io(png, out.f);
  png_set_IHDR(png, info, static_cast<png_uint_32>(w), static_cast<png_uint_32>(h), 8, color,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (const auto& r : rows) png_write_row(png, const_cast<png_bytep>(r.data()));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
}

}  // namespace

void write_png_gray(const std::string& path, const Tensor& gray) {
  if (gray.dtype() != DType::kUI8 || gray.rank() != 2)
    fail("image", "{}: write_png_gray expects ui8 [H, W] (got {})", path, gray.type_str());
  const int64_t h = gray.shape()[0], w = gray.shape()[1];
  std::vector<std::vector<uint8_t>> rows;
  for (int64_t y = 0; y < h; ++y)
    rows.emplace_back(gray.data<uint8_t>() + y * w, gray.data<uint8_t>() + (y + 1) * w);
  write_png(path, h, w, PNG_COLOR_TYPE_GRAY, rows);
}

void write_png_rgb(const std::string& path, const Tensor& rgb) {
  if (rgb.dtype() != DType::kUI8 || rgb.rank() != 3 || rgb.shape()[0] != 3)
    fail("image", "{}: write_png_rgb expects ui8 [3, H, W] (got {})", path, rgb.type_str());
  const int64_t h = rgb.shape()[1], w = rgb.shape()[2];
  std::vector<std::vector<uint8_t>> rows(size_t(h), std::vector<uint8_t>(size_t(w * 3)));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t c = 0; c < 3; ++c)
        rows[size_t(y)][size_t(x * 3 + c)] = rgb.data<uint8_t>()[(c * h + y) * w + x];
  write_png(path, h, w, PNG_COLOR_TYPE_RGB, rows);
}

}  // namespace netspec::data
