// Test-time augmentation (TrainConfig useTTA, the seed's): `views` augmented forwards of every
// evaluation sample through the eval module, logits averaged, then scored. View v of sample i is
// exactly what the training loader's crop/flip (data::Augment) draws for sample i in epoch v
// under seed `seed` (the training pipeline minus mixup/cutmix, which need the label). With a split,
// each rank runs its batches of every view; the per-view logit sums are added across the ranks
// and then over the views in order, so every rank gets one process's result bit for bit.
#pragma once
#include <cstdint>
#include <vector>

#include "data/loader.h"
#include "train/evaluate.h"

namespace netspec::train {

EvalMetrics evaluate_tta(const Evaluator& ev, const std::vector<Tensor>& params,
                         const std::vector<Tensor>& running, const data::Dataset& ds,
                         const data::Augment& aug, int views, uint64_t seed,
                         const RankSplit& split = {});

}  // namespace netspec::train
