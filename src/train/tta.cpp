// See tta.h: a training-mode Loader per view supplies the augmented batches (shuffled), so the
// logits are summed per sample index and scored in dataset order at the end.
#include "train/tta.h"

#include <cstring>

#include "core/error.h"

namespace netspec::train {

EvalMetrics evaluate_tta(const Evaluator& ev, const std::vector<Tensor>& params,
                         const std::vector<Tensor>& running, const data::Dataset& ds,
                         const data::Augment& aug, int views, uint64_t seed,
                         const RankSplit& split) {
  if (views < 1) fail("tta", "ttaSamples must be >= 1 (got {})", views);
  const int64_t b = ev.batch(), n = ds.size();
  // Output [B, ..., classes]: `per` floats per sample (known also on a rank that runs no batch).
  const Shape& os = ev.manifest().outputs.at(0).shape;
  const int64_t classes = os.back();
  int64_t per = 1;
  for (size_t k = 1; k < os.size(); ++k) per *= os[k];
  std::vector<double> sum(static_cast<size_t>(n * per), 0.0), view;
  std::vector<int64_t> none;
  for (int v = 0; v < views; ++v) {
    data::Loader ld(ds, b, true, seed, aug);
    ld.start_epoch(v);
    view.assign(sum.size(), 0.0);
    for (int64_t i = 0; i < ld.num_batches(); ++i) {
      if (!split.mine(i)) continue;
      Tensor x, y;
      const int64_t rows = ld.batch(i, x, y);
      if (rows < b) {  // the eval module has a fixed batch: zero rows after the tail
        Shape s = x.shape();
        s[0] = b;
        Tensor full(x.dtype(), s);
        std::memcpy(full.raw(), x.raw(), x.nbytes());
        x = std::move(full);
      }
      Tensor z = ev.logits(params, running, x);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t s = ld.order().at(i * b + r);
        for (int64_t e = 0; e < per; ++e) view[s * per + e] = z.data<float>()[r * per + e];
      }
    }
    split.sum(view, none, "tta");  // each sample's logits come from one rank
    for (size_t k = 0; k < sum.size(); ++k) sum[k] += view[k];
  }
  // Mean logits, scored in dataset order in chunks of the eval batch.
  data::Loader in_order(ds, b, false, 0);
  in_order.start_epoch(0);
  Scorer sc;
  for (int64_t i = 0; i < in_order.num_batches(); ++i) {
    Tensor x, y;
    const int64_t rows = in_order.batch(i, x, y);
    Shape zs = {b};
    if (per != classes) zs.push_back(per / classes);
    zs.push_back(classes);
    Tensor z(DType::kF32, zs);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t e = 0; e < per; ++e)
        z.data<float>()[r * per + e] = static_cast<float>(sum[(i * b + r) * per + e] / views);
    sc.add(z, y, rows);
  }
  return sc.result();
}

}  // namespace netspec::train
