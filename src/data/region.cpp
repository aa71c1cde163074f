// Partial (window, DCT-scaled) image decoding (see region.h).
#include "data/region.h"

#include <png.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "data/image.h"
#include "data/jpeg_err.h"

namespace netspec::data {
namespace {

RegionRequest clamped(RegionRequest r, int64_t ih, int64_t iw) {
  r.top = std::clamp<int64_t>(r.top, 0, ih - 1);
  r.left = std::clamp<int64_t>(r.left, 0, iw - 1);
  r.height = std::clamp<int64_t>(r.height, 1, ih - r.top);
  r.width = std::clamp<int64_t>(r.width, 1, iw - r.left);
  return r;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Chroma upsampling (4:2:0's fancy filter reads one chroma sample, 2 pixels, either side).
constexpr int64_t kMargin = 2;

// libjpeg's message, or "" on success (with_jpeg: only C objects and references in its body;
// `choose` must not throw). A header over max_pixels returns "" with out.h == 0 and ih, iw set;
// a partial decode of a stream without an end-of-image marker returns "" with out.h == 0 (the
// caller decodes it whole).
std::string jpeg_region(const std::string& bytes, const RegionChooser& choose, bool dct_scale,
                        int64_t max_pixels, Region& out, int64_t& ih, int64_t& iw) {
  return with_jpeg(bytes, [&](jpeg_decompress_struct& cinfo) {
    ih = cinfo.image_height;
    iw = cinfo.image_width;
    out.h = 0;
    if (ih * iw > max_pixels) return;
    const RegionRequest rq = clamped(choose(ih, iw), ih, iw);
    int d = 1;
    if (dct_scale && rq.out_h > 0 && rq.out_w > 0)
      while (d < 8 && rq.height >= rq.out_h * 2 * d && rq.width >= rq.out_w * 2 * d) d *= 2;
    // The window's rows must end the stream's data or be followed by an end-of-image marker:
    // stopping early would otherwise hide a truncated file.
    const int64_t y1_full = std::min(ceil_div(rq.top + rq.height, d), ceil_div(ih, d));
    bool has_eoi = false;
    for (size_t k = bytes.size(); k >= 2 && k + 64 >= bytes.size() && !has_eoi; --k)
      has_eoi =
          static_cast<uint8_t>(bytes[k - 2]) == 0xFF && static_cast<uint8_t>(bytes[k - 1]) == 0xD9;
    if (y1_full < ceil_div(ih, d) && !has_eoi) return;
    const bool inverted = set_rgb_output(cinfo);  // CMYK/YCCK converted below
    cinfo.scale_num = 1;
    cinfo.scale_denom = static_cast<unsigned>(d);
    jpeg_start_decompress(&cinfo);
    const int64_t fh = cinfo.output_height, fw = cinfo.output_width;
    const int64_t y0 = std::min(rq.top / d, fh - 1),
                  y1 = std::min(ceil_div(rq.top + rq.height, d), fh);
    const int64_t x0 = std::min(rq.left / d, fw - 1),
                  x1 = std::min(ceil_div(rq.left + rq.width, d), fw);
    // Chroma upsampling treats the decoded columns' edges as the image's: a margin keeps the
    // window's own pixels equal to a full decode's (rows are: libjpeg keeps their context).
    const int64_t mx0 = std::max<int64_t>(x0 - kMargin, 0), mx1 = std::min(x1 + kMargin, fw);
    JDIMENSION xoff = static_cast<JDIMENSION>(mx0), xw = static_cast<JDIMENSION>(mx1 - mx0);
    if (mx1 - mx0 < fw) jpeg_crop_scanline(&cinfo, &xoff, &xw);  // xoff rounds down to an iMCU
    const int ch = cinfo.output_components;
    if (y0 > 0) jpeg_skip_scanlines(&cinfo, static_cast<JDIMENSION>(y0));
    const int64_t rows = y1 - y0;
    uint8_t* buf = out.scratch(static_cast<size_t>(rows * xw * ch));
    while (static_cast<int64_t>(cinfo.output_scanline) < y1) {
      JSAMPROW row = buf + static_cast<size_t>(cinfo.output_scanline - y0) * xw * ch;
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
    if (y1 == fh)
      jpeg_finish_decompress(&cinfo);
    else
      jpeg_abort_decompress(&cinfo);
    if (ch == 4) cmyk_to_rgb_inplace(buf, static_cast<size_t>(rows * xw), inverted);
    const int oc = ch == 4 ? 3 : ch;
    out.denom = d;
    out.image_h = ih;
    out.image_w = iw;
    out.full_h = fh;
    out.full_w = fw;
    out.oy = y0;
    out.ox = xoff;
    out.h = rows;
    out.w = xw;
    out.channels = oc;
    out.xs = oc;
    out.ys = static_cast<int64_t>(xw) * oc;
    out.cs = 1;
    out.px = buf;
    out.request = rq;
  });
}

}  // namespace

void stored_region(const uint8_t* chw, int64_t c, int64_t h, int64_t w, const RegionChooser& choose,
                   Region& out) {
  out.request = clamped(choose(h, w), h, w);
  out.denom = 1;
  out.image_h = h;
  out.image_w = w;
  out.full_h = out.h = h;
  out.full_w = out.w = w;
  out.oy = out.ox = 0;
  out.channels = static_cast<int>(c);
  out.cs = h * w;
  out.ys = w;
  out.xs = 1;
  out.px = chw;
}

void stored_region(const Tensor& chw, const RegionChooser& choose, Region& out) {
  if (chw.dtype() != DType::kUI8 || chw.rank() != 3 || (chw.shape()[0] != 1 && chw.shape()[0] != 3))
    fail("image", "a stored region needs ui8 [1|3, H, W] (got {})", chw.type_str());
  out.keep = chw;
  stored_region(out.keep.data<uint8_t>(), chw.shape()[0], chw.shape()[1], chw.shape()[2], choose,
                out);
}

void decode_region(const std::string& bytes, const std::string& path, const RegionChooser& choose,
                   bool dct_scale, Region& out) {
  const auto* u = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() >= 3 && u[0] == 0xFF && u[1] == 0xD8 && u[2] == 0xFF) {
    int64_t ih = 0, iw = 0;
    const int64_t cap = max_image_pixels();
    const std::string err = jpeg_region(bytes, choose, dct_scale, cap, out, ih, iw);
    if (!err.empty()) fail("image", "{}: corrupt or truncated JPEG ({})", path, err);
    if (ih * iw > cap)
      fail("image",
           "{}: {}x{} is {} pixels, more than the limit of {} (a decompression bomb? set "
           "{} to allow more)",
           path, iw, ih, ih * iw, cap, kMaxImagePixelsEnv);
    if (out.h > 0) return;
  }
  // PNG, or a JPEG to decode whole (its errors are named there).
  stored_region(decode_image_bytes(bytes, path), choose, out);
}

}  // namespace netspec::data
