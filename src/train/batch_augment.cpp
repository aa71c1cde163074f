// See batch_augment.h.
#include "train/batch_augment.h"

#include "core/error.h"
#include "losses/loss.h"

namespace netspec::train {

BatchAugment::BatchAugment(const TrainConfig& c, const ParamTable& t, const data::Dataset& train)
    : seed_(static_cast<uint64_t>(c.seed)) {
  const bool mixing = c.mixup || c.cutmix || c.knnMixup;
  soft_ = losses::is_lowered(c.lossKind) && losses::loss_traits(c.lossKind).soft;
  if (mixing && !soft_)
    fail("train",
         "mixup/cutmix/knnMixup produce soft labels: lossKind must be softLabelCE or bce (got {})",
         enum_name(c.lossKind));
  if (soft_ && (train.y.dtype() != DType::kI32 || train.y.shape().size() != 1))
    fail("train", "lossKind {} is fed from class labels [N] (got labels {})", enum_name(c.lossKind),
         train.y.type_str());
  erase_ = c.randomErasing;
  erase_p_ = c.randomErasingProb;
  if ((mixing || erase_) && train.x.shape().size() != 4)
    fail("train", "mixup/cutmix/knnMixup/randomErasing need image data [N, C, H, W] (got {})",
         train.x.type_str());
  if (soft_) {
    if (t.output.size() != 1)
      fail("train", "lossKind {} needs logits [B, N] (got output {})", enum_name(c.lossKind),
           shape_str(t.output));
    mix_ = data::MixConfig::from_train(c, t.output[0]);
  }
}

void BatchAugment::apply(int64_t epoch, int64_t index, const data::Loader& ld,
                         data::Batch& mb) const {
  const int64_t n = mb.x.shape().at(0);
  if (erase_) {
    const int64_t h = mb.x.shape()[2], w = mb.x.shape()[3];
    for (int64_t r = 0; r < n; ++r) {
      const int64_t sample = ld.order().at(index * ld.batch_size() + r);
      data::erase(mb.x, r,
                  data::erase_box(data::erase_uniforms(seed_, epoch, sample), erase_p_, h, w));
    }
  }
  if (!soft_) return;
  if (mix_.any()) {
    const data::MixDraw d =
        data::mix_draw(mix_, seed_, epoch, index, mb.x.shape()[2], mb.x.shape()[3]);
    mb.y = mix_.knn_alpha > 0 ? data::apply_knn_mix(mix_, d, mb.x, mb.y)
                              : data::apply_mix(mix_, d, mb.x, mb.y);
  } else {
    mb.y = data::soft_targets(mb.y, mix_.classes, mix_.smoothing);
  }
}

}  // namespace netspec::train
