// See tta.h: a training-mode Loader per view supplies the augmented batches (shuffled), so the
// logits are summed per sample index and scored in dataset order at the end.
#include "train/tta.h"

#include <cstring>

#include "core/error.h"
#include "data/sample_source.h"

namespace netspec::train {

TtaLogits tta_logits(const Evaluator& ev, const std::vector<Tensor>& params,
                     const std::vector<Tensor>& running, const data::Dataset& ds,
                     const data::Augment& aug, int views, uint64_t seed, const RankSplit& split) {
  if (views < 1) fail("tta", "ttaSamples must be >= 1 (got {})", views);
  const int64_t b = ev.batch(), n = ds.size();
  // Output [B, ..., classes]: `per` floats per sample (known also on a rank that runs no batch).
  const Shape& os = ev.manifest().outputs.at(0).shape;
  TtaLogits t;
  t.classes = os.back();
  for (size_t k = 1; k < os.size(); ++k) t.per *= os[k];
  t.mean.assign(static_cast<size_t>(n * t.per), 0.0);
  t.views_read.assign(static_cast<size_t>(n), 0);
  const bool skip_bad = ds.streamed() && data::pipeline_options().skip_bad;
  std::vector<double> view;
  std::vector<int64_t> read;
  std::vector<int64_t> samples;
  for (int v = 0; v < views; ++v) {
    data::Loader ld(ds, b, true, seed, aug);
    ld.set_skip_bad(skip_bad, true);  // an unreadable sample is left out of the view, not replaced
    ld.start_epoch(v);
    view.assign(t.mean.size(), 0.0);
    read.assign(t.views_read.size(), 0);
    for (int64_t i = 0; i < ld.num_batches(); ++i) {
      if (!split.mine(i)) continue;
      Tensor x, y;
      const int64_t rows = ld.batch(i, x, y, &samples);
      if (x.shape()[0] < b) {  // the eval module has a fixed batch: zero rows after the tail
        Shape s = x.shape();
        s[0] = b;
        Tensor full(x.dtype(), s);
        std::memcpy(full.raw(), x.raw(), x.nbytes());
        x = std::move(full);
      }
      Tensor z = ev.logits(params, running, x);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t s = samples.at(static_cast<size_t>(r));
        read[static_cast<size_t>(s)] = 1;
        for (int64_t e = 0; e < t.per; ++e) view[s * t.per + e] = z.data<float>()[r * t.per + e];
      }
    }
    if (v == 0) t.skipped_first = ld.skipped().first;
    split.sum(view, read, "tta");  // each sample's logits come from one rank
    for (size_t k = 0; k < view.size(); ++k) t.mean[k] += view[k];
    for (size_t k = 0; k < read.size(); ++k) t.views_read[k] += read[k];
  }
  for (int64_t s = 0; s < n; ++s) {
    const int64_t got = t.views_read[static_cast<size_t>(s)];
    if (got == 0) continue;
    for (int64_t e = 0; e < t.per; ++e) t.mean[s * t.per + e] /= static_cast<double>(got);
  }
  return t;
}

EvalMetrics evaluate_tta(const Evaluator& ev, const std::vector<Tensor>& params,
                         const std::vector<Tensor>& running, const data::Dataset& ds,
                         const data::Augment& aug, int views, uint64_t seed,
                         const RankSplit& split) {
  const TtaLogits t = tta_logits(ev, params, running, ds, aug, views, seed, split);
  // Mean logits of the samples read, scored in dataset order in chunks of the eval batch; the
  // labels come from the split itself (no second decode of the images).
  const int64_t b = ev.batch(), n = ds.size();
  const size_t yrow = ds.y.nbytes() / static_cast<size_t>(std::max<int64_t>(n, 1));
  Shape zs = {b}, ys = ds.y.shape();
  if (t.per != t.classes) zs.push_back(t.per / t.classes);
  zs.push_back(t.classes);
  ys.at(0) = b;
  Scorer sc;
  for (int64_t s = 0; s < n;) {
    Tensor z(DType::kF32, zs), y(ds.y.dtype(), ys);
    std::memset(y.raw(), 0, y.nbytes());
    int64_t rows = 0;
    for (; s < n && rows < b; ++s) {
      if (t.views_read[static_cast<size_t>(s)] == 0) {
        ++sc.skipped;
        continue;
      }
      for (int64_t e = 0; e < t.per; ++e)
        z.data<float>()[rows * t.per + e] = static_cast<float>(t.mean[s * t.per + e]);
      std::memcpy(static_cast<uint8_t*>(y.raw()) + rows * yrow,
                  static_cast<const uint8_t*>(ds.y.raw()) + s * yrow, yrow);
      ++rows;
    }
    if (rows > 0) sc.add(z, y, rows);
  }
  EvalMetrics m = sc.result();
  m.skipped_first = t.skipped_first;
  return m;
}

}  // namespace netspec::train
