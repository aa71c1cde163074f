// Detection training glue (det_train.h).
#include "tasks/detection/det_train.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "core/error.h"
#include "data/loader.h"
#include "layers/lower.h"

namespace netspec::train {

DetTargets det_targets(const NetSpec& net, const ParamTable& t, const TrainConfig& c) {
  DetTargets d;
  d.kind = c.lossKind;
  d.diou = c.useDiouBox;
  if (t.input.size() != 3)
    fail("detection", "needs an image net (got input {})", shape_str(t.input));
  d.height = t.input[1];
  d.width = t.input[2];
  if (c.lossKind == LossKind::yolov1Masked) {
    if (t.output.size() != 3 || t.output[0] < 5)
      fail("detection", "yolov1Masked needs a grid output [5 + K, gH, gW] (got {})",
           shape_str(t.output));
    d.classes = t.output[0] - 5;
    d.gh = t.output[1];
    d.gw = t.output[2];
    return d;
  }
  if (c.lossKind == LossKind::detrSet) {
    if (t.output.size() != 2 || t.output[1] < 6)
      fail("detection", "detrSet needs detrHeads rows [Q, K + 5] (got {})", shape_str(t.output));
    d.queries = t.output[0];
    d.classes = t.output[1] - 5;
    return d;
  }
  if (c.lossKind != LossKind::yoloAnchor)
    fail("detection",
         "a detection dataset needs lossKind yoloAnchor, yolov1Masked or detrSet (got {})",
         enum_name(c.lossKind));
  const Layer* head = nullptr;
  for (const Layer& l : net.layers)
    if (layers::traits(l).detector) head = &l;
  if (!head) fail("detection", "net {} has no detector head (fpnDetect)", net.name);
  const auto [a, oc] = layers::traits(*head).detector(*head);
  d.classes = oc - 5;
  d.anchors = {c.anchors, c.fpnScales, a};
  return d;
}

namespace {

// detrSet's per-image box rows [Q, 5] (see assign_targets).
Tensor detr_box_rows(const std::vector<data::Box>& boxes, const DetTargets& d) {
  if (static_cast<int64_t>(boxes.size()) > d.queries)
    fail("detection", "an image has {} boxes, more than the {} queries of detrHeads", boxes.size(),
         d.queries);
  Tensor y(DType::kF32, {d.queries, 5});
  float* p = y.data<float>();
  for (int64_t q = 0; q < d.queries; ++q) p[q * 5] = -1;
  const double w = static_cast<double>(d.width), h = static_cast<double>(d.height);
  for (size_t i = 0; i < boxes.size(); ++i) {
    const data::Box& b = boxes[i];
    const double v[5] = {double(b.cls), (b.x0 + b.x1) / (2 * w), (b.y0 + b.y1) / (2 * h), b.w() / w,
                         b.h() / h};
    for (int j = 0; j < 5; ++j) p[i * 5 + j] = static_cast<float>(v[j]);
  }
  return y;
}

}  // namespace

Tensor assign_targets(const DetTargets& d, const std::vector<std::vector<data::Box>>& boxes) {
  const int64_t n = static_cast<int64_t>(boxes.size());
  std::vector<Tensor> per;
  for (const auto& b : boxes)
    per.push_back(d.kind == LossKind::detrSet ? detr_box_rows(b, d)
                  : d.kind == LossKind::yolov1Masked
                      ? data::assign_yolov1(b, d.width, d.height, d.gh, d.gw, d.classes)
                      : data::assign_anchor_rows(b, d.anchors, d.width, d.height));
  Shape s = per.at(0).shape();
  s.insert(s.begin(), n);
  Tensor y(DType::kF32, s);
  const size_t row = per[0].nbytes();
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(static_cast<uint8_t*>(y.raw()) + i * row, per[i].raw(), row);
  return y;
}

data::Dataset det_epoch(const data::DetImages& train, const DetTargets& d, const TrainConfig& c,
                        uint64_t seed, int epoch) {
  Tensor x = train.x;
  std::vector<std::vector<data::Box>> boxes = train.boxes;
  const bool aug = c.augment || c.fpnAffineProb > 0;
  if (aug) {
    x = Tensor(train.x.dtype(), train.x.shape());
    std::memcpy(x.raw(), train.x.raw(), x.nbytes());
    const int64_t n = x.shape()[0], per = x.numel() / n;
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + uint64_t(epoch) * 7919 + 17);
    data::AffineAug af{c.fpnAffineScale,
                       c.fpnAffineTranslate,
                       c.fpnAffineProb,
                       {c.fpnAffineWhThrPx, c.fpnAffineAreaThr}};
    for (int64_t i = 0; i < n; ++i) {
      Tensor img(DType::kUI8, {x.shape()[1], x.shape()[2], x.shape()[3]});
      uint8_t* dst = x.data<uint8_t>() + i * per;
      std::memcpy(img.raw(), dst, size_t(per));
      if (c.augment && (rng() & 1)) data::hflip(img, boxes[i]);
      data::random_affine(img, boxes[i], af, rng);
      std::memcpy(dst, img.raw(), size_t(per));
    }
  }
  return data::Dataset(x, assign_targets(d, boxes), data::kImageNetNorm.mean,
                       data::kImageNetNorm.std);
}

std::vector<Detection> decode_output(const DetTargets& d, const Tensor& out, const NmsOptions& o,
                                     int64_t image) {
  if (d.kind == LossKind::detrSet)  // one box per query, no NMS (DETR)
    return nms(decode_detr(out, d.width, d.height, o.score, image), 1.0, o.score, o.max_det);
  std::vector<Detection> raw =
      d.kind == LossKind::yolov1Masked
          ? decode_yolov1(out, d.width, d.height, d.diou, o.score, image)
          : decode_anchor_rows(out, d.anchors, d.width, d.height, o.score, image);
  return nms(std::move(raw), o.iou, o.score, o.max_det);
}

namespace {

// Every rank's detections, in image order (each image's come from one rank, in decode order).
// Two exchanges: the counts, then rows (image, x0, y0, x1, y1, class, score) padded to the
// largest count (exchange wants the same shape from every rank).
std::vector<Detection> gather_detections(const std::vector<Detection>& mine,
                                         const RankSplit& split) {
  if (!split.group) return mine;
  constexpr int64_t kW = 7;
  const auto counts = split.group->exchange(
      split.rank, {Tensor::from<int64_t>(DType::kI64, {1}, {int64_t(mine.size())})});
  int64_t most = 1;
  for (const auto& c : counts) most = std::max(most, c.at(0).as_int64(0));
  std::vector<double> rows(static_cast<size_t>(most * kW), 0.0);
  for (size_t k = 0; k < mine.size(); ++k) {
    const Detection& e = mine[k];
    const double r[kW] = {double(e.image), e.box.x0,          e.box.y0, e.box.x1,
                          e.box.y1,        double(e.box.cls), e.score};
    std::copy(r, r + kW, rows.begin() + static_cast<ptrdiff_t>(k * kW));
  }
  const auto all =
      split.group->exchange(split.rank, {Tensor::from<double>(DType::kF64, {most * kW}, rows)});
  std::vector<Detection> out;
  for (size_t r = 0; r < all.size(); ++r)
    for (int64_t k = 0; k < counts.at(r).at(0).as_int64(0); ++k) {
      auto v = [&](int64_t j) { return all[r].at(0).as_double(k * kW + j); };
      Detection e;
      e.image = static_cast<int64_t>(v(0));
      e.box = {v(1), v(2), v(3), v(4), static_cast<int>(v(5))};
      e.score = v(6);
      out.push_back(e);
    }
  std::stable_sort(out.begin(), out.end(),
                   [](const Detection& a, const Detection& b) { return a.image < b.image; });
  return out;
}

}  // namespace

std::vector<Detection> detect(const Evaluator& ev, const std::vector<Tensor>& params,
                              const std::vector<Tensor>& running, const data::Dataset& images,
                              const DetTargets& d, const NmsOptions& o, const RankSplit& split) {
  data::Loader ld(images, ev.batch(), false, 0);
  ld.start_epoch(0);
  std::vector<Detection> all;
  Tensor x, y;
  for (int64_t b = 0; b < ld.num_batches(); ++b) {
    if (!split.mine(b)) continue;
    const int64_t n = ld.batch(b, x, y);
    Tensor out = ev.logits(params, running, x);
    Shape s(out.shape().begin() + 1, out.shape().end());
    Tensor one(DType::kF32, s);
    const size_t row = one.nbytes();
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(one.raw(), static_cast<const uint8_t*>(out.raw()) + i * row, row);
      auto det = decode_output(d, one, o, b * ev.batch() + i);
      all.insert(all.end(), det.begin(), det.end());
    }
  }
  return gather_detections(all, split);
}

DetMetrics evaluate_det(const Evaluator& ev, const std::vector<Tensor>& params,
                        const std::vector<Tensor>& running, const data::Dataset& test_images,
                        const data::DetImages& test, const DetTargets& d, const RankSplit& split) {
  NmsOptions o;
  o.score = 0.001;  // the usual mAP protocol: low threshold, 100 per image
  return evaluate_detections(detect(ev, params, running, test_images, d, o, split), test.boxes,
                             d.classes);
}

}  // namespace netspec::train
