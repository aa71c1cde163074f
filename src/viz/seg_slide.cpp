// Sliding-window segmentation of whole images (see seg_slide.h).
#include "viz/seg_slide.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "data/image.h"
#include "viz/model.h"
#include "viz/seg_view.h"

namespace netspec::viz {

std::vector<int64_t> slide_starts(int64_t length, int64_t window) {
  if (window < 1 || length < window)
    fail("segmentation", "windows of {} do not fit an axis of {}", window, length);
  const int64_t stride = std::max<int64_t>(1, window * 2 / 3);
  std::vector<int64_t> s{0};
  while (s.back() + window < length) s.push_back(std::min(s.back() + stride, length - window));
  return s;
}

Tensor stitch_windows(const Tensor& windows, const std::vector<int64_t>& ys,
                      const std::vector<int64_t>& xs, int64_t height, int64_t width) {
  const Shape& ws = windows.shape();  // [n, C, h, w]
  if (ws.size() != 4 || windows.dtype() != DType::kF32 || ws[0] != int64_t(ys.size()) ||
      ys.size() != xs.size())
    fail("segmentation", "window logits f32 [n, C, h, w] for {} windows (got {})", ys.size(),
         windows.type_str());
  const int64_t c = ws[1], h = ws[2], w = ws[3];
  std::vector<double> sum(size_t(c * height * width), 0.0), count(size_t(height * width), 0.0);
  const float* l = windows.data<float>();
  for (size_t i = 0; i < ys.size(); ++i) {
    if (ys[i] < 0 || xs[i] < 0 || ys[i] + h > height || xs[i] + w > width)
      fail("segmentation", "window {} at ({}, {}) leaves the {}x{} field", i, ys[i], xs[i],
           height, width);
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x) {
        const int64_t q = (ys[i] + y) * width + xs[i] + x;
        count[size_t(q)] += 1;
        for (int64_t k = 0; k < c; ++k)
          sum[size_t(k * height * width + q)] += l[((int64_t(i) * c + k) * h + y) * w + x];
      }
  }
  Tensor out(DType::kF32, {c, height, width});
  for (int64_t k = 0; k < c; ++k)
    for (int64_t q = 0; q < height * width; ++q) {
      if (count[size_t(q)] == 0) fail("segmentation", "pixel {} is in no window", q);
      out.data<float>()[k * height * width + q] =
          static_cast<float>(sum[size_t(k * height * width + q)] / count[size_t(q)]);
    }
  return out;
}

Tensor upsample_bilinear(const Tensor& field, int64_t height, int64_t width) {
  const Shape& fs = field.shape();
  if (fs.size() != 3 || field.dtype() != DType::kF32)
    fail("segmentation", "bilinear resize of f32 [C, h, w] (got {})", field.type_str());
  const int64_t c = fs[0], h = fs[1], w = fs[2];
  // Source coordinate of output pixel i: (i + 0.5) · in / out - 0.5, clamped to the edge pixels.
  auto taps = [](int64_t out, int64_t in) {
    std::vector<std::pair<int64_t, double>> t;  // (lower index, weight of the upper one)
    for (int64_t i = 0; i < out; ++i) {
      const double s =
          std::clamp((double(i) + 0.5) * double(in) / double(out) - 0.5, 0.0, double(in - 1));
      const auto lo = static_cast<int64_t>(std::floor(s));
      t.emplace_back(lo, s - double(lo));
    }
    return t;
  };
  const auto ty = taps(height, h), tx = taps(width, w);
  Tensor out(DType::kF32, {c, height, width});
  const float* f = field.data<float>();
  float* o = out.data<float>();
  for (int64_t k = 0; k < c; ++k)
    for (int64_t y = 0; y < height; ++y) {
      const auto [y0, wy] = ty[size_t(y)];
      const int64_t y1 = std::min(y0 + 1, h - 1);
      for (int64_t x = 0; x < width; ++x) {
        const auto [x0, wx] = tx[size_t(x)];
        const int64_t x1 = std::min(x0 + 1, w - 1);
        const float* p = f + k * h * w;
        const double top = p[y0 * w + x0] * (1 - wx) + p[y0 * w + x1] * wx;
        const double bot = p[y1 * w + x0] * (1 - wx) + p[y1 * w + x1] * wx;
        o[(k * height + y) * width + x] = static_cast<float>(top * (1 - wy) + bot * wy);
      }
    }
  return out;
}

namespace {

std::vector<int32_t> argmax_field(const Tensor& field) {
  const Shape& s = field.shape();
  const Tensor m = argmax_masks(field.reshaped({1, s[0], s[1], s[2]}), 1);
  const int32_t* p = m.data<int32_t>();
  return std::vector<int32_t>(p, p + m.numel());
}

report::RgbImage picture_of(const Tensor& px) {  // ui8 [3, H, W]
  const int64_t h = px.shape()[1], w = px.shape()[2];
  report::RgbImage img(static_cast<int>(w), static_cast<int>(h));
  for (int64_t i = 0; i < h * w; ++i)
    for (int k = 0; k < 3; ++k) img.rgb[size_t(i * 3 + k)] = px.data<uint8_t>()[k * h * w + i];
  return img;
}

}  // namespace

FullMask segment_whole_image(const train::Evaluator& ev, const std::vector<Tensor>& params,
                             const std::vector<Tensor>& running, const std::string& path,
                             const Shape& in, DatasetKind kind) {
  FullMask r;
  const int64_t b = ev.batch();
  auto run_windows = [&](const std::vector<Tensor>& xs) {  // logits [n, C, h, w] in batches of b
    std::vector<Tensor> outs;
    for (size_t at = 0; at < xs.size(); at += size_t(b)) {
      std::vector<Tensor> chunk(xs.begin() + long(at),
                                xs.begin() + long(std::min(xs.size(), at + size_t(b))));
      const size_t used = chunk.size();
      while (int64_t(chunk.size()) < b) chunk.push_back(chunk.back());  // padding rows
      Tensor l = ev.logits(params, running, stack(chunk));
      const float* lp = l.data<float>();
      if (!std::all_of(lp, lp + l.numel(), [](float v) { return std::isfinite(v); }))
        fail("predict", "{}: the net's outputs are not finite (NaN or Inf in the input or the "
             "checkpoint)", path);
      const int64_t per = l.numel() / b;
      Shape one(l.shape().begin() + 1, l.shape().end());
      for (size_t i = 0; i < used; ++i) {
        Tensor t(DType::kF32, one);
        std::memcpy(t.raw(), l.data<float>() + int64_t(i) * per, size_t(per) * sizeof(float));
        outs.push_back(std::move(t));
      }
    }
    return stack(outs);
  };
  if (path.ends_with(".npy") || in.size() != 3) {  // no pixels to slide over: one window
    Tensor l = run_windows({load_input(path, in, kind, 1.0)});
    Shape one(l.shape().begin() + 1, l.shape().end());
    l = l.reshaped(one);
    r.height = one[1], r.width = one[2];
    r.mask = r.picture_mask = argmax_field(l);
    r.picture = tensor_picture(load_input(path, in, kind, 1.0).data<float>(), in, kind);
    return r;
  }
  const Tensor img = data::decode_image(path);  // ui8 [3, ih, iw]
  r.height = img.shape()[1], r.width = img.shape()[2];
  const data::CoverCrop cover = data::cover_crop(r.height, r.width, in[1], in[2]);
  const int64_t ch = cover.rh, cw = cover.rw;
  const Tensor px =
      data::resize_images(img.reshaped({1, 3, r.height, r.width}), ch, cw).reshaped({3, ch, cw});
  const std::vector<int64_t> sy = slide_starts(ch, in[1]),
                             sx = slide_starts(cw, in[2]);
  std::vector<Tensor> xs;
  std::vector<int64_t> ys, xs0;
  for (int64_t y0 : sy)
    for (int64_t x0 : sx) {
      Tensor win(DType::kUI8, {3, in[1], in[2]});
      for (int64_t k = 0; k < 3; ++k)
        for (int64_t y = 0; y < in[1]; ++y)
          std::memcpy(win.data<uint8_t>() + (k * in[1] + y) * in[2],
                      px.data<uint8_t>() + (k * ch + y0 + y) * cw + x0,
                      size_t(in[2]));
      xs.push_back(input_from_pixels(win, in, kind, path));
      ys.push_back(y0);
      xs0.push_back(x0);
    }
  const Tensor field = stitch_windows(run_windows(xs), ys, xs0, ch, cw);
  r.picture = picture_of(px);
  r.picture_mask = argmax_field(field);
  r.mask = argmax_field(upsample_bilinear(field, r.height, r.width));
  return r;
}

}  // namespace netspec::viz
