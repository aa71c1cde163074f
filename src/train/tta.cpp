// See tta.h: a training-mode Loader per view supplies the augmented batches (shuffled), so the
// logits are summed per sample index and scored in dataset order at the end.
#include "train/tta.h"

#include <cstring>

#include "core/error.h"

namespace netspec::train {

EvalMetrics evaluate_tta(const Evaluator& ev, const std::vector<Tensor>& params,
                         const std::vector<Tensor>& running, const data::Dataset& ds,
                         const data::Augment& aug, int views, uint64_t seed) {
  if (views < 1) fail("tta", "ttaSamples must be >= 1 (got {})", views);
  const int64_t b = ev.batch(), n = ds.size();
  std::vector<double> sum;
  int64_t classes = 0;
  for (int v = 0; v < views; ++v) {
    data::Loader ld(ds, b, true, seed, aug);
    ld.start_epoch(v);
    for (int64_t i = 0; i < ld.num_batches(); ++i) {
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
      const int64_t per = z.numel() / b;
      if (sum.empty()) {
        classes = z.shape().back();
        sum.assign(static_cast<size_t>(n * per), 0.0);
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t s = ld.order().at(i * b + r);
        for (int64_t e = 0; e < per; ++e) sum[s * per + e] += z.data<float>()[r * per + e];
      }
    }
  }
  // Mean logits, scored in dataset order in chunks of the eval batch.
  data::Loader in_order(ds, b, false, 0);
  in_order.start_epoch(0);
  Scorer sc;
  for (int64_t i = 0; i < in_order.num_batches(); ++i) {
    Tensor x, y;
    const int64_t rows = in_order.batch(i, x, y);
    const int64_t per = static_cast<int64_t>(sum.size()) / n;
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
