// Sample views: random-resized-crop / cover geometry and the fused render (see view.h).
#include "data/view.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "data/image.h"

namespace netspec::data {
namespace {

// Uniform in [0, 1) from 53 bits of draw j of the key.
double uniform(uint64_t key, uint64_t j) {
  return static_cast<double>(splitmix64(key ^ (0x100 + j)) >> 11) * 0x1.0p-53;
}

// Taps of an axis whose output box starts at `start` and spans `extent` pixels of the region's
// axis, clamped to [lo, hi) (the crop: resized_crop never reads outside it).
Taps box_taps(double start, double extent, int64_t lo, int64_t hi, int64_t out) {
  Taps t = taps_scaled(hi - lo, extent / static_cast<double>(out), 0, out,
                       start - static_cast<double>(lo));
  for (int64_t& f : t.first) f += lo;
  return t;
}

int64_t end_of(const Taps& t) {
  int64_t e = 0;
  for (size_t i = 0; i < t.first.size(); ++i) e = std::max(e, t.first[i] + t.count[i]);
  return e;
}

}  // namespace

CropWindow rrc_window(uint64_t key, int64_t ih, int64_t iw, const RrcParams& p) {
  const double area = static_cast<double>(ih) * static_cast<double>(iw);
  const double lr0 = std::log(p.ratio_min), lr1 = std::log(p.ratio_max);
  for (uint64_t t = 0; t < 10; ++t) {
    const double target = area * (p.scale_min + (p.scale_max - p.scale_min) * uniform(key, 4 * t));
    const double aspect = std::exp(lr0 + (lr1 - lr0) * uniform(key, 4 * t + 1));
    // Python's round (half to even), as torchvision's int(round(...)).
    const auto w = static_cast<int64_t>(std::nearbyint(std::sqrt(target * aspect)));
    const auto h = static_cast<int64_t>(std::nearbyint(std::sqrt(target / aspect)));
    if (w > 0 && w <= iw && h > 0 && h <= ih) {
      const auto top = static_cast<int64_t>(uniform(key, 4 * t + 2) * static_cast<double>(ih - h + 1));
      const auto left = static_cast<int64_t>(uniform(key, 4 * t + 3) * static_cast<double>(iw - w + 1));
      return {std::min(top, ih - h), std::min(left, iw - w), h, w};
    }
  }
  // Fallback: the centre crop, its aspect clamped to the ratio range.
  const double in_ratio = static_cast<double>(iw) / static_cast<double>(ih);
  int64_t w = iw, h = ih;
  if (in_ratio < p.ratio_min)
    h = static_cast<int64_t>(std::nearbyint(static_cast<double>(w) / p.ratio_min));
  else if (in_ratio > p.ratio_max)
    w = static_cast<int64_t>(std::nearbyint(static_cast<double>(h) * p.ratio_max));
  return {(ih - h) / 2, (iw - w) / 2, h, w};
}

RegionChooser rrc_chooser(uint64_t key, const RrcParams& p, int64_t out_h, int64_t out_w) {
  return [key, p, out_h, out_w](int64_t ih, int64_t iw) {
    const CropWindow c = rrc_window(key, ih, iw, p);
    return RegionRequest{c.top, c.left, c.height, c.width, out_h, out_w};
  };
}

RegionChooser cover_chooser(int64_t out_h, int64_t out_w, double crop_ratio) {
  return [out_h, out_w, crop_ratio](int64_t ih, int64_t iw) {
    const CoverCrop cc = cover_crop(ih, iw, out_h, out_w, crop_ratio);
    const Taps ty = taps(ih, cc.rh, cc.top, out_h), tx = taps(iw, cc.rw, cc.left, out_w);
    // The rows and columns the taps read, with a margin for the scaled image's rounding; the
    // resolution kept is the resized size's share of the window.
    constexpr int64_t kMargin = 16;
    const int64_t y0 = std::max<int64_t>(ty.first.front() - kMargin, 0);
    const int64_t y1 = std::min(end_of(ty) + kMargin, ih);
    const int64_t x0 = std::max<int64_t>(tx.first.front() - kMargin, 0);
    const int64_t x1 = std::min(end_of(tx) + kMargin, iw);
    return RegionRequest{y0, x0, y1 - y0, x1 - x0, (y1 - y0) * cc.rh / ih + 1,
                         (x1 - x0) * cc.rw / iw + 1};
  };
}

void rrc_taps(const Region& r, int64_t out_h, int64_t out_w, Taps& ty, Taps& tx) {
  const RegionRequest& q = r.request;
  const double d = r.denom;
  if (r.denom == 1) {  // exactly the crop resized alone
    ty = box_taps(static_cast<double>(q.top), static_cast<double>(q.height), q.top,
                  q.top + q.height, out_h);
    tx = box_taps(static_cast<double>(q.left), static_cast<double>(q.width), q.left,
                  q.left + q.width, out_w);
    return;
  }
  // Scaled: the box in scaled pixels, clamped to the scaled pixels it touches.
  const auto lo = [&](int64_t v) { return v / r.denom; };
  const auto hi = [&](int64_t v, int64_t full) { return std::min((v + r.denom - 1) / r.denom, full); };
  ty = box_taps(q.top / d, q.height / d, lo(q.top), hi(q.top + q.height, r.full_h), out_h);
  tx = box_taps(q.left / d, q.width / d, lo(q.left), hi(q.left + q.width, r.full_w), out_w);
}

void cover_taps(const Region& r, int64_t out_h, int64_t out_w, double crop_ratio, Taps& ty,
                Taps& tx) {
  // The full-resolution geometry, its input coordinates divided by the scale.
  const CoverCrop cc = cover_crop(r.image_h, r.image_w, out_h, out_w, crop_ratio);
  const double d = r.denom;
  ty = taps_scaled(r.full_h, static_cast<double>(r.image_h) / static_cast<double>(cc.rh) / d,
                   cc.top, out_h);
  tx = taps_scaled(r.full_w, static_cast<double>(r.image_w) / static_cast<double>(cc.rw) / d,
                   cc.left, out_w);
}

void render_view(const Region& r, const Taps& ty, const Taps& tx, int64_t out_c, bool flip,
                 const float* lut, float* dst, uint8_t* dst8) {
  const int64_t H = static_cast<int64_t>(ty.first.size()), W = static_cast<int64_t>(tx.first.size());
  const int64_t ic = r.channels;
  if (!(out_c == ic || (out_c == 1 && ic == 3)))
    fail("view", "cannot render {} channels from {} (expected the same, or 1 from 3)", out_c, ic);
  const int64_t r0 = ty.first.front(), r1 = end_of(ty);
  if (r0 < r.oy || r1 > r.oy + r.h || tx.first.front() < r.ox || end_of(tx) > r.ox + r.w)
    fail("view", "taps read rows {}..{}, columns {}..{} outside the decoded window {}+{}, {}+{}",
         r0, r1, tx.first.front(), end_of(tx), r.oy, r.h, r.ox, r.w);
  // Horizontal pass over the rows the vertical taps read: mid[row][x][c].
  thread_local std::vector<float> mid, acc;
  const int64_t rowlen = W * ic;
  mid.resize(static_cast<size_t>((r1 - r0) * rowlen));
  acc.resize(static_cast<size_t>(rowlen));
  for (int64_t y = r0; y < r1; ++y) {
    float* m = mid.data() + (y - r0) * rowlen;
    for (int64_t x = 0; x < W; ++x) {
      const float* w = &tx.w[static_cast<size_t>(x * tx.kmax)];
      const uint8_t* p = r.at(y, tx.first[x]);
      const int64_t n = tx.count[x];
      for (int64_t c = 0; c < ic; ++c) {
        const uint8_t* q = p + c * r.cs;
        float s = 0;
        for (int64_t k = 0; k < n; ++k) s += w[k] * static_cast<float>(q[k * r.xs]);
        m[x * ic + c] = s;
      }
    }
  }
  // Vertical pass per output row, then round, flip, normalise and store.
  const int64_t hw = H * W;
  for (int64_t y = 0; y < H; ++y) {
    const float* w = &ty.w[static_cast<size_t>(y * ty.kmax)];
    const float* m0 = mid.data() + (ty.first[y] - r0) * rowlen;
    std::fill(acc.begin(), acc.end(), 0.f);
    for (int64_t k = 0; k < ty.count[y]; ++k) {
      const float wk = w[k];
      const float* m = m0 + k * rowlen;
      for (int64_t j = 0; j < rowlen; ++j) acc[j] += wk * m[j];
    }
    for (int64_t x = 0; x < W; ++x) {
      const int64_t o = y * W + (flip ? W - 1 - x : x);
      uint8_t v[3];
      for (int64_t c = 0; c < ic; ++c) v[c] = to_u8(acc[x * ic + c]);
      if (out_c == 1 && ic == 3) v[0] = static_cast<uint8_t>((v[0] + v[1] + v[2] + 1) / 3);
      for (int64_t c = 0; c < out_c; ++c) {
        if (lut)
          dst[c * hw + o] = lut[c * 256 + v[c]];
        else
          dst8[c * hw + o] = v[c];
      }
    }
  }
}

}  // namespace netspec::data
