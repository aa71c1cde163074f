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
      const auto top =
          static_cast<int64_t>(uniform(key, 4 * t + 2) * static_cast<double>(ih - h + 1));
      const auto left =
          static_cast<int64_t>(uniform(key, 4 * t + 3) * static_cast<double>(iw - w + 1));
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
    return RegionRequest{
        y0, x0, y1 - y0, x1 - x0, (y1 - y0) * cc.rh / ih + 1, (x1 - x0) * cc.rw / iw + 1};
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
  const auto hi = [&](int64_t v, int64_t full) {
    return std::min((v + r.denom - 1) / r.denom, full);
  };
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

namespace {

// Rounds a non-negative filter sum to a byte (half up, as lround for s >= 0), clamped.
inline uint8_t round_u8(float s) {
  const int v = static_cast<int>(s + 0.5f);
  return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

// One row of the horizontal pass on interleaved floats `f` (IC channels, column 0 = x_lo):
// m[x·IC + c] = sum_k w[x][k]·f[(first[x] - x_lo + k)·IC + c] over all kmax taps (weights past
// count are 0, and f is zero-padded past the row, so the sum is the same), two outputs at once
// for independent accumulators.
template <int IC>
void horizontal_row(const float* f, const Taps& tx, int64_t x_lo, int64_t W, float* m) {
  const int64_t K = tx.kmax;
  int64_t x = 0;
  for (; x + 1 < W; x += 2) {
    const float* w0 = &tx.w[static_cast<size_t>(x * K)];
    const float* w1 = w0 + K;
    const float* p0 = f + (tx.first[x] - x_lo) * IC;
    const float* p1 = f + (tx.first[x + 1] - x_lo) * IC;
    float a[IC] = {}, b[IC] = {};
    for (int64_t k = 0; k < K; ++k)
      for (int c = 0; c < IC; ++c) {
        a[c] += w0[k] * p0[k * IC + c];
        b[c] += w1[k] * p1[k * IC + c];
      }
    for (int c = 0; c < IC; ++c) m[x * IC + c] = a[c], m[(x + 1) * IC + c] = b[c];
  }
  for (; x < W; ++x) {
    const float* w0 = &tx.w[static_cast<size_t>(x * K)];
    const float* p0 = f + (tx.first[x] - x_lo) * IC;
    float a[IC] = {};
    for (int64_t k = 0; k < K; ++k)
      for (int c = 0; c < IC; ++c) a[c] += w0[k] * p0[k * IC + c];
    for (int c = 0; c < IC; ++c) m[x * IC + c] = a[c];
  }
}

}  // namespace

void render_view(const Region& r, const Taps& ty, const Taps& tx, int64_t out_c, bool flip,
                 const float* lut, float* dst, uint8_t* dst8) {
  const int64_t H = static_cast<int64_t>(ty.first.size()),
                W = static_cast<int64_t>(tx.first.size());
  const int64_t ic = r.channels;
  if (!(out_c == ic || (out_c == 1 && ic == 3)) || (ic != 1 && ic != 3))
    fail("view", "cannot render {} channels from {} (expected the same, or 1 from 3)", out_c, ic);
  const int64_t r0 = ty.first.front(), r1 = end_of(ty);
  const int64_t x_lo = tx.first.front(), x_hi = end_of(tx);
  if (r0 < r.oy || r1 > r.oy + r.h || x_lo < r.ox || x_hi > r.ox + r.w)
    fail("view", "taps read rows {}..{}, columns {}..{} outside the decoded window {}+{}, {}+{}",
         r0, r1, x_lo, x_hi, r.oy, r.h, r.ox, r.w);
  // Horizontal pass over the rows the vertical taps read: mid[row][x][c]. Each source row is
  // first widened to interleaved floats (zero-padded by kmax columns for the fixed-length taps).
  thread_local std::vector<float> mid, acc, frow;
  thread_local std::vector<uint8_t> bytes;
  const int64_t rowlen = W * ic, cols = x_hi - x_lo;
  mid.resize(static_cast<size_t>((r1 - r0) * rowlen));
  acc.resize(static_cast<size_t>(rowlen));
  bytes.resize(static_cast<size_t>(rowlen));
  frow.assign(static_cast<size_t>((cols + tx.kmax) * ic), 0.f);
  for (int64_t y = r0; y < r1; ++y) {
    const uint8_t* p = r.at(y, x_lo);
    if (r.xs == ic && r.cs == 1) {  // interleaved (a JPEG's scanlines): contiguous bytes
      for (int64_t j = 0; j < cols * ic; ++j) frow[j] = static_cast<float>(p[j]);
    } else {
      for (int64_t x = 0; x < cols; ++x)
        for (int64_t c = 0; c < ic; ++c)
          frow[x * ic + c] = static_cast<float>(p[x * r.xs + c * r.cs]);
    }
    float* m = mid.data() + (y - r0) * rowlen;
    if (ic == 3)
      horizontal_row<3>(frow.data(), tx, x_lo, W, m);
    else
      horizontal_row<1>(frow.data(), tx, x_lo, W, m);
  }
  // Vertical pass per output row (over all kmax taps: zero weights past count, rows clamped),
  // then round, flip, normalise and store.
  const int64_t hw = H * W;
  uint8_t* v8 = bytes.data();
  for (int64_t y = 0; y < H; ++y) {
    const float* w = &ty.w[static_cast<size_t>(y * ty.kmax)];
    float* a = acc.data();
    for (int64_t j = 0; j < rowlen; ++j) a[j] = 0.f;
    for (int64_t k = 0; k < ty.count[y]; ++k) {
      const float wk = w[k];
      const float* m = mid.data() + (ty.first[y] + k - r0) * rowlen;
      for (int64_t j = 0; j < rowlen; ++j) a[j] += wk * m[j];
    }
    for (int64_t j = 0; j < rowlen; ++j) v8[j] = round_u8(a[j]);
    float* drow = dst ? dst + y * W : nullptr;
    uint8_t* brow = dst8 ? dst8 + y * W : nullptr;
    for (int64_t x = 0; x < W; ++x) {
      const int64_t o = flip ? W - 1 - x : x;
      const uint8_t* v = v8 + x * ic;
      if (out_c == 1 && ic == 3) {
        const auto g = static_cast<uint8_t>((v[0] + v[1] + v[2] + 1) / 3);
        if (drow)
          drow[o] = lut[g];
        else
          brow[o] = g;
        continue;
      }
      for (int64_t c = 0; c < out_c; ++c) {
        if (drow)
          drow[c * hw + o] = lut[c * 256 + v[c]];
        else
          brow[c * hw + o] = v[c];
      }
    }
  }
}

}  // namespace netspec::data
