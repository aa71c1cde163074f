// Encodes small PNG (libpng's simplified API) and JPEG (libjpeg) images for the data tests.
#pragma once
#include <jpeglib.h>
#include <png.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace netspec::test {

// px: h·w·channels bytes, interleaved; format PNG_FORMAT_RGB / _GRAY / _RGBA.
inline void write_png(const std::string& path, int w, int h, uint32_t format,
                      const std::vector<uint8_t>& px) {
  png_image im;
  std::memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  im.width = static_cast<png_uint_32>(w);
  im.height = static_cast<png_uint_32>(h);
  im.format = format;
  if (!png_image_write_to_file(&im, path.c_str(), 0, px.data(), 0, nullptr))
    throw std::runtime_error("write_png " + path + ": " + im.message);
}

// Baseline JPEG without chroma subsampling (so colours survive to within a few levels);
// channels 1 (gray), 3 (RGB) or 4 (CMYK, written with an Adobe marker, i.e. inverted values).
// subsample: libjpeg's default 4:2:0 (2x2 chroma, 16x16 iMCUs), as most photographs.
inline std::string jpeg_bytes(int w, int h, int channels, const std::vector<uint8_t>& px,
                              int quality = 95, bool subsample = false) {
  jpeg_compress_struct c;
  jpeg_error_mgr e;
  c.err = jpeg_std_error(&e);
  jpeg_create_compress(&c);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buf, &size);
  c.image_width = static_cast<JDIMENSION>(w);
  c.image_height = static_cast<JDIMENSION>(h);
  c.input_components = channels;
  c.in_color_space = channels == 4 ? JCS_CMYK : channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, TRUE);
  for (int i = 0; i < c.num_components && !subsample; ++i)
    c.comp_info[i].h_samp_factor = c.comp_info[i].v_samp_factor = 1;
  jpeg_start_compress(&c, TRUE);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row =
        const_cast<uint8_t*>(px.data()) + static_cast<size_t>(c.next_scanline) * w * channels;
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  std::string out(reinterpret_cast<char*>(buf), size);
  std::free(buf);
  jpeg_destroy_compress(&c);
  return out;
}

}  // namespace netspec::test
