// Image decoding, resizing and image-folder trees (see image.h).
#include "data/image.h"

#include <png.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/file_check.h"
#include "core/thread_pool.h"
#include "data/dir_list.h"
#include "data/jpeg_err.h"
#include "data/resample.h"
#include "data/view.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

std::string read_all(const std::string& path) { return read_regular_file("image", path); }

// HWC interleaved with `ch` channels -> ui8 [out, H, W] (first three channels, or gray x3; a
// fourth output channel is the alpha, 255 where the file has none).
Tensor to_chw(const uint8_t* p, int64_t h, int64_t w, int ch, int out = 3) {
  Tensor t(DType::kUI8, {out, h, w});
  uint8_t* o = t.data<uint8_t>();
  const int64_t hw = h * w;
  for (int64_t i = 0; i < hw; ++i) {
    for (int c = 0; c < 3; ++c) o[c * hw + i] = p[i * ch + (ch >= 3 ? c : 0)];
    if (out == 4) o[3 * hw + i] = ch == 4 ? p[i * ch + 3] : uint8_t{255};
  }
  return t;
}

[[noreturn]] void too_many_pixels(const std::string& path, uint64_t h, uint64_t w) {
  fail("image",
       "{}: {}x{} is {} pixels, more than the limit of {} (a decompression bomb? set {} "
       "to allow more)",
       path, w, h, h * w, max_image_pixels(), kMaxImagePixelsEnv);
}

Tensor decode_png(const std::string& bytes, const std::string& path, int out = 3) {
  png_image im;
  std::memset(&im, 0, sizeof im);
  im.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&im, bytes.data(), bytes.size()))
    fail("image", "{}: bad PNG ({})", path, im.message);
  // The header's size is checked before the pixel buffer is allocated.
  if (static_cast<uint64_t>(im.width) * im.height > static_cast<uint64_t>(max_image_pixels())) {
    png_image_free(&im);
    too_many_pixels(path, im.height, im.width);
  }
  // 8-bit sRGB RGBA (straight alpha): gray replicated, palette expanded; alpha dropped below.
  im.format = PNG_FORMAT_RGBA;
  std::vector<uint8_t> px(PNG_IMAGE_SIZE(im));
  if (!png_image_finish_read(&im, nullptr, px.data(), 0, nullptr)) {
    std::string msg = im.message;
    png_image_free(&im);
    fail("image", "{}: corrupt or truncated PNG ({})", path, msg);
  }
  return to_chw(px.data(), im.height, im.width, 4, out);
}

// libjpeg's message, or "" on success (with_jpeg: px and the outputs are references). A header
// over `max_pixels` returns "" with px empty and h, w set, before any allocation.
std::string decode_jpeg_raw(const std::string& bytes, std::vector<uint8_t>& px, int64_t& h,
                            int64_t& w, int& channels, bool& inverted, int64_t max_pixels) {
  return with_jpeg(bytes, [&](jpeg_decompress_struct& cinfo) {
    h = cinfo.image_height;
    w = cinfo.image_width;
    if (h * w > max_pixels) return;
    inverted = set_rgb_output(cinfo);
    jpeg_start_decompress(&cinfo);
    h = cinfo.output_height;
    w = cinfo.output_width;
    channels = cinfo.output_components;
    px.resize(static_cast<size_t>(h * w * channels));
    while (cinfo.output_scanline < cinfo.output_height) {
      JSAMPROW row = px.data() + static_cast<size_t>(cinfo.output_scanline) * w * channels;
      jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
  });
}

}  // namespace

void jpeg_error_exit(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegErr*>(c->err);
  (*c->err->format_message)(c, e->msg);
  longjmp(e->jump, 1);
}

void jpeg_emit(j_common_ptr c, int level) {
  if (level < 0) jpeg_error_exit(c);  // -1: a warning (e.g. premature end of data)
}

// CMYK -> RGB as PIL: R = (255 - C)(255 - K) / 255; Adobe files store inverted CMYK, where
// that is C·K / 255.
void cmyk_to_rgb_inplace(unsigned char* px, size_t n, bool inverted) {
  for (size_t i = 0; i < n; ++i) {
    const int k = inverted ? px[i * 4 + 3] : 255 - px[i * 4 + 3];
    for (int c = 0; c < 3; ++c) {
      const int v = inverted ? px[i * 4 + c] : 255 - px[i * 4 + c];
      px[i * 3 + c] = static_cast<uint8_t>((v * k + 127) / 255);
    }
  }
}

bool has_image_ext(const std::string& path) {
  std::string e = fs::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e == ".jpg" || e == ".jpeg" || e == ".png";
}

int64_t max_image_pixels() {
  const char* v = std::getenv(kMaxImagePixelsEnv);
  if (!v || !*v) return kDefaultMaxImagePixels;
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v, &end, 10);
  if (*end || errno || n < 1)
    fail("image", "{} must be a positive integer (got '{}')", kMaxImagePixelsEnv, v);
  return n;
}

Tensor decode_image(const std::string& path) { return decode_image_bytes(read_all(path), path); }

Tensor decode_image_rgba(const std::string& path) {
  const std::string b = read_all(path);
  const auto* u = reinterpret_cast<const uint8_t*>(b.data());
  if (b.size() >= 8 && png_sig_cmp(u, 0, 8) == 0) return decode_png(b, path, 4);
  const Tensor rgb = decode_image_bytes(b, path);  // JPEG: opaque
  const int64_t hw = rgb.shape()[1] * rgb.shape()[2];
  Tensor t(DType::kUI8, {4, rgb.shape()[1], rgb.shape()[2]});
  std::copy_n(rgb.data<uint8_t>(), 3 * hw, t.data<uint8_t>());
  std::fill_n(t.data<uint8_t>() + 3 * hw, hw, uint8_t{255});
  return t;
}

Tensor decode_image_bytes(const std::string& b, const std::string& path) {
  const auto* u = reinterpret_cast<const uint8_t*>(b.data());
  if (b.size() >= 8 && png_sig_cmp(u, 0, 8) == 0) return decode_png(b, path);
  if (b.size() >= 3 && u[0] == 0xFF && u[1] == 0xD8 && u[2] == 0xFF) {
    std::vector<uint8_t> px;
    int64_t h = 0, w = 0;
    int channels = 3;
    bool inverted = false;
    const int64_t cap = max_image_pixels();
    std::string err = decode_jpeg_raw(b, px, h, w, channels, inverted, cap);
    if (!err.empty()) fail("image", "{}: corrupt or truncated JPEG ({})", path, err);
    if (h * w > cap) too_many_pixels(path, h, w);
    if (channels == 4) {
      cmyk_to_rgb_inplace(px.data(), px.size() / 4, inverted);
      px.resize(px.size() / 4 * 3);
    }
    return to_chw(px.data(), h, w, 3);
  }
  fail("image", "{}: not a JPEG or PNG file ({} bytes, unknown magic)", path, b.size());
}

Taps taps_scaled(int64_t in, double scale, int64_t off, int64_t out, double shift) {
  const double fscale = std::max(scale, 1.0), support = fscale;
  Taps t;
  t.kmax = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  t.first.resize(out);
  t.count.resize(out);
  t.w.assign(static_cast<size_t>(out * t.kmax), 0.f);
  std::vector<double> ws;
  for (int64_t i = 0; i < out; ++i) {
    const double center = shift + (static_cast<double>(i + off) + 0.5) * scale;
    int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    int64_t hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in);
    hi = std::min(hi, lo + t.kmax);
    double sum = 0;
    ws.clear();
    for (int64_t j = lo; j < hi; ++j) {
      const double x = std::abs((static_cast<double>(j) - center + 0.5) / fscale);
      ws.push_back(x < 1.0 ? 1.0 - x : 0.0);
      sum += ws.back();
    }
    t.first[i] = lo;
    t.count[i] = std::max<int64_t>(hi - lo, 0);
    for (size_t k = 0; k < ws.size(); ++k)
      t.w[i * t.kmax + k] = static_cast<float>(sum > 0 ? ws[k] / sum : 0.0);
  }
  return t;
}

CoverCrop cover_crop(int64_t ih, int64_t iw, int64_t height, int64_t width, double crop_ratio) {
  // The size the image must cover: the crop, or floor(crop / ratio) (torchvision's int()).
  const auto ch = static_cast<int64_t>(static_cast<double>(height) / crop_ratio);
  const auto cw = static_cast<int64_t>(static_cast<double>(width) / crop_ratio);
  // Resized size: the axis with the larger scale lands exactly on the cover size; the other
  // keeps the aspect ratio (truncated, as torchvision), never below it.
  int64_t rh, rw;
  if (static_cast<double>(ch) / ih >= static_cast<double>(cw) / iw) {
    rh = ch;
    rw = std::max(cw, static_cast<int64_t>(static_cast<double>(ch) * iw / ih));
  } else {
    rw = cw;
    rh = std::max(ch, static_cast<int64_t>(static_cast<double>(cw) * ih / iw));
  }
  // Python's round (half to even), as torchvision's CenterCrop.
  return {rh, rw, static_cast<int64_t>(std::nearbyint((rh - height) / 2.0)),
          static_cast<int64_t>(std::nearbyint((rw - width) / 2.0))};
}

namespace {

// One plane through the taps: the horizontal pass over the input rows the vertical taps touch,
// then the vertical pass; `store` writes each output value (rounded and clamped for ui8).
template <typename In, typename Store>
void resample_plane(const In* src, int64_t iw, const Taps& ty, const Taps& tx, int64_t height,
                    int64_t width, std::vector<float>& mid, Store store) {
  const int64_t r0 = ty.first.front(), r1 = ty.first.back() + ty.count.back();
  mid.assign(static_cast<size_t>((r1 - r0) * width), 0.f);
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t x = 0; x < width; ++x) {
      float s = 0;
      const float* w = &tx.w[x * tx.kmax];
      const In* p = src + r * iw + tx.first[x];
      for (int64_t k = 0; k < tx.count[x]; ++k) s += w[k] * static_cast<float>(p[k]);
      mid[(r - r0) * width + x] = s;
    }
  for (int64_t y = 0; y < height; ++y)
    for (int64_t x = 0; x < width; ++x) {
      float s = 0;
      const float* w = &ty.w[y * ty.kmax];
      for (int64_t k = 0; k < ty.count[y]; ++k) s += w[k] * mid[(ty.first[y] + k - r0) * width + x];
      store(y * width + x, s);
    }
}

}  // namespace

Tensor resize_center_crop(const Tensor& img, int64_t height, int64_t width, double crop_ratio) {
  if (img.dtype() != DType::kUI8 || img.rank() != 3 || img.shape()[0] != 3)
    fail("image", "resize expects ui8 [3, H, W] (got {})", img.type_str());
  if (height < 1 || width < 1)
    fail("image", "target size must be positive (got {}x{})", height, width);
  if (!(crop_ratio > 0 && crop_ratio <= 1))
    fail("image", "crop ratio must be in (0, 1] (got {})", crop_ratio);
  // The cover view of the whole image (view.h): the same code as the streamed and windowed
  // decodes, so every path gives the same bytes.
  Region r;
  stored_region(img, cover_chooser(height, width, crop_ratio), r);
  Taps ty, tx;
  cover_taps(r, height, width, crop_ratio, ty, tx);
  Tensor out(DType::kUI8, {3, height, width});
  render_view(r, ty, tx, 3, false, nullptr, nullptr, out.data<uint8_t>());
  return out;
}

Tensor resize_images(const Tensor& x, int64_t height, int64_t width) {
  if (x.rank() != 4 || (x.dtype() != DType::kUI8 && x.dtype() != DType::kF32))
    fail("image", "resize_images expects ui8 or f32 [N, C, H, W] (got {})", x.type_str());
  if (height < 1 || width < 1)
    fail("image", "target size must be positive (got {}x{})", height, width);
  const int64_t n = x.shape()[0] * x.shape()[1], ih = x.shape()[2], iw = x.shape()[3];
  const Taps ty = taps(ih, height, 0, height), tx = taps(iw, width, 0, width);
  Tensor out(x.dtype(), {x.shape()[0], x.shape()[1], height, width});
  parallel_for(n, 16, [&](int64_t b, int64_t e) {
    std::vector<float> mid;
    for (int64_t p = b; p < e; ++p) {
      if (x.dtype() == DType::kUI8) {
        uint8_t* dst = out.data<uint8_t>() + p * height * width;
        resample_plane(x.data<uint8_t>() + p * ih * iw, iw, ty, tx, height, width, mid,
                       [&](int64_t i, float s) { dst[i] = to_u8(s); });
      } else {
        float* dst = out.data<float>() + p * height * width;
        resample_plane(x.data<float>() + p * ih * iw, iw, ty, tx, height, width, mid,
                       [&](int64_t i, float s) { dst[i] = s; });
      }
    }
  });
  return out;
}

Tensor preprocess_image(const std::string& path, int64_t height, int64_t width,
                        const std::vector<float>& mean, const std::vector<float>& std,
                        double crop_ratio) {
  if (mean.size() != 3 || std.size() != 3)
    fail("image", "mean and std need 3 values (got {} and {})", mean.size(), std.size());
  Tensor u = resize_center_crop(decode_image(path), height, width, crop_ratio);
  Tensor f(DType::kF32, {3, height, width});
  const int64_t hw = height * width;
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t i = 0; i < hw; ++i)
      f.data<float>()[c * hw + i] =
          (static_cast<float>(u.data<uint8_t>()[c * hw + i]) / 255.f - mean[c]) / std[c];
  return f;
}

ImageFolderList list_image_folder(const std::string& split_dir, int64_t limit,
                                  const std::vector<std::string>& classes) {
  if (entry_kind("image-folder", split_dir) != EntryKind::kDirectory)
    fail("image-folder", "{}: no such directory", split_dir);
  ImageFolderList f;
  for (const DirEntry& e : list_dir("image-folder", split_dir))
    if (e.kind == EntryKind::kDirectory) f.classes.push_back(e.path.filename().string());
  std::sort(f.classes.begin(), f.classes.end());
  if (f.classes.empty())
    fail("image-folder", "{}: no class subfolders (expected {}/<class>/*.jpg)", split_dir,
         split_dir);
  if (!classes.empty() && f.classes != classes)
    fail("image-folder", "{}: class folders differ from the training split's (got {}, expected {})",
         split_dir, f.classes.size(), classes.size());
  auto& files = f.files;
  for (size_t c = 0; c < f.classes.size(); ++c) {
    std::vector<std::string> in_class;
    for (const DirEntry& e : list_dir("image-folder", fs::path(split_dir) / f.classes[c]))
      if (e.kind == EntryKind::kRegular && has_image_ext(e.path.string()))
        in_class.push_back(e.path.string());
    if (in_class.empty())
      fail("image-folder", "{}/{}: no .jpg/.jpeg/.png images", split_dir, f.classes[c]);
    std::sort(in_class.begin(), in_class.end());
    for (auto& p : in_class) files.emplace_back(std::move(p), static_cast<int32_t>(c));
  }
  if (limit > 0 && limit < static_cast<int64_t>(files.size())) {
    // Evenly strided, centred: file floor((i + 1/2)·n / limit) for i < limit.
    std::vector<std::pair<std::string, int32_t>> kept;
    const auto n = static_cast<int64_t>(files.size());
    for (int64_t i = 0; i < limit; ++i)
      kept.push_back(files[static_cast<size_t>((2 * i + 1) * n / (2 * limit))]);
    files = std::move(kept);
  }
  return f;
}

ImageFolder load_image_folder(const std::string& split_dir, int64_t height, int64_t width,
                              const Normalization& norm, int64_t limit,
                              const std::vector<std::string>& classes, double crop_ratio) {
  if (height < 1 || width < 1)
    fail("image-folder", "{}: the input size is needed (got {}x{})", split_dir, height, width);
  ImageFolderList l = list_image_folder(split_dir, limit, classes);
  ImageFolder f;
  f.ds = load_image_list(l.files, height, width, norm, crop_ratio);
  f.classes = std::move(l.classes);
  return f;
}

Dataset load_image_list(const std::vector<std::pair<std::string, int32_t>>& files, int64_t height,
                        int64_t width, const Normalization& norm, double crop_ratio) {
  const auto n = static_cast<int64_t>(files.size());
  Dataset ds{Tensor(DType::kUI8, {n, 3, height, width}),
             Tensor(DType::kI32, {n}),
             norm.mean,
             norm.std,
             {}};
  const size_t row = static_cast<size_t>(3 * height * width);
  parallel_for(n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      Tensor t = resize_center_crop(decode_image(files[i].first), height, width, crop_ratio);
      std::memcpy(ds.x.data<uint8_t>() + i * row, t.raw(), row);
      ds.y.data<int32_t>()[i] = files[i].second;
    }
  });
  return ds;
}

}  // namespace netspec::data
