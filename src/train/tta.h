// Test-time augmentation (TrainConfig useTTA, the seed's): `views` augmented forwards of every
// evaluation sample through the eval module, logits averaged, then scored. View v of sample i is
// exactly what the training loader's crop/flip (data::Augment) draws for sample i in epoch v
// under seed `seed` (the training pipeline minus mixup/cutmix, which need the label). With a split,
// each rank runs its batches of every view; the per-view logit sums are added across the ranks
// and then over the views in order, so every rank gets one process's result bit for bit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/loader.h"
#include "train/evaluate.h"

namespace netspec::train {

// Every sample's logits averaged over the views that read it ([n, per] in dataset order, per =
// the floats of one output row). With --skip-bad-images on a streamed split an unreadable sample
// is left out of each view (never replaced); views_read[s] = 0 then and its row stays 0.
struct TtaLogits {
  std::vector<double> mean;
  std::vector<int64_t> views_read;
  int64_t per = 1, classes = 0;
  std::string skipped_first;  // the first unreadable sample's error (view 0, this rank)
};
TtaLogits tta_logits(const Evaluator& ev, const std::vector<Tensor>& params,
                     const std::vector<Tensor>& running, const data::Dataset& ds,
                     const data::Augment& aug, int views, uint64_t seed,
                     const RankSplit& split = {});

// The mean logits scored: samples no view read are left out (EvalMetrics::skipped).
EvalMetrics evaluate_tta(const Evaluator& ev, const std::vector<Tensor>& params,
                         const std::vector<Tensor>& running, const data::Dataset& ds,
                         const data::Augment& aug, int views, uint64_t seed,
                         const RankSplit& split = {});

}  // namespace netspec::train
