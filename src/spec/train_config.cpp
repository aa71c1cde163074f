// TrainConfig range checks.
#include "spec/train_config.h"

#include <cmath>
#include <type_traits>

#include "core/error.h"

namespace netspec {
namespace {
void at_least(const char* name, double v, double lo) {
  if (!(v >= lo)) fail("train", "{} must be >= {} (got {})", name, lo, v);
}
void in_unit(const char* name, double v, bool closed_high) {
  if (!(v >= 0 && (closed_high ? v <= 1 : v < 1)))
    fail("train", "{} must be in [0, 1{} (got {})", name, closed_high ? "]" : ")", v);
}
// The monitor, top-k, early stop and plateau fields (train/checkpoint_policy.h). The monitor's
// name is checked against the task's metrics columns by the trainer.
void validate_checkpoint_policy(const TrainConfig& c) {
  if (!c.monitor.empty() && c.monitor != "train_loss" && c.monitor.rfind("val_", 0) != 0)
    fail("train",
         "monitor must be train_loss or a validation column val_* of metrics.csv (got '{}')",
         c.monitor);
  if (c.monitorMode != "auto" && c.monitorMode != "min" && c.monitorMode != "max")
    fail("train", "monitorMode must be min, max or auto (got '{}')", c.monitorMode);
  at_least("saveTopK", c.saveTopK, 0);
  at_least("earlyStopPatience", c.earlyStopPatience, 0);
  at_least("earlyStopMinDelta", c.earlyStopMinDelta, 0);
  if (!(c.plateauFactor > 0 && c.plateauFactor < 1))
    fail("train", "plateauFactor must be in (0, 1) (got {})", c.plateauFactor);
  at_least("plateauPatience", c.plateauPatience, 0);
  at_least("plateauCooldown", c.plateauCooldown, 0);
  at_least("plateauMinLr", c.plateauMinLr, 0);
  at_least("plateauThreshold", c.plateauThreshold, 0);
}
}  // namespace

void validate(const TrainConfig& c) {
  // inf and nan pass most range checks below (and would be written as null into config.json).
  c.visit([](const char* name, const auto& f, const char*) {
    using F = std::decay_t<decltype(f)>;
    if constexpr (std::is_same_v<F, double>) {
      if (!std::isfinite(f)) fail("train", "{} must be a finite number (got {})", name, f);
    } else if constexpr (std::is_same_v<F, DoubleList>) {
      for (double v : f)
        if (!std::isfinite(v)) fail("train", "{} must hold finite numbers (got {})", name, v);
    }
  });
  if (!(c.learningRate > 0)) fail("train", "learningRate must be > 0 (got {})", c.learningRate);
  at_least("batchSize", c.batchSize, 1);
  at_least("epochs", c.epochs, 1);
  at_least("seed", c.seed, 0);
  in_unit("momentum", c.momentum, false);
  in_unit("rmspropDecay", c.rmspropDecay, false);
  if (!(c.rmspropEps > 0)) fail("train", "rmspropEps must be > 0 (got {})", c.rmspropEps);
  at_least("weightDecay", c.weightDecay, 0);
  at_least("gradClipNorm", c.gradClipNorm, 0);
  at_least("headLrMult", c.headLrMult, 0);
  at_least("gradAccumSteps", c.gradAccumSteps, 1);
  at_least("warmupEpochs", c.warmupEpochs, 0);
  if (c.warmupEpochs >= c.epochs)
    fail("train", "warmupEpochs must be < epochs (got {}, epochs {})", c.warmupEpochs, c.epochs);
  in_unit("expLRDecayRate", c.expLRDecayRate, true);
  if (!(c.expLRDecayEpochs > 0))
    fail("train", "expLRDecayEpochs must be > 0 (got {})", c.expLRDecayEpochs);
  in_unit("labelSmoothing", c.labelSmoothing, false);
  at_least("focalGamma", c.focalGamma, 0);
  if (c.lossKind == LossKind::perPixelWeightedCE && c.lossWeights.empty())
    fail("train", "perPixelWeightedCE needs lossWeights (got none)");
  if (!c.lossWeights.empty() && c.lossKind != LossKind::perPixelWeightedCE)
    fail("train", "lossWeights are read only by lossKind perPixelWeightedCE (got lossKind {})",
         enum_name(c.lossKind));
  for (double w : c.lossWeights) at_least("lossWeights[i]", w, 0);
  if (!(c.mixupAlpha > 0)) fail("train", "mixupAlpha must be > 0 (got {})", c.mixupAlpha);
  if (!(c.knnMixupAlpha > 0))
    fail("train", "knnMixupAlpha must be > 0 (got {})", c.knnMixupAlpha);
  if (!(c.cutmixAlpha > 0)) fail("train", "cutmixAlpha must be > 0 (got {})", c.cutmixAlpha);
  in_unit("randomErasingProb", c.randomErasingProb, true);
  at_least("randAugmentN", c.randAugmentN, 0);
  if (c.randAugmentM < 0 || c.randAugmentM > 10)
    fail("train", "randAugmentM must be in [0, 10] (got {})", c.randAugmentM);
  at_least("randAugmentMstd", c.randAugmentMstd, 0);
  at_least("repeatedAug", c.repeatedAug, 1);
  at_least("trainRes", c.trainRes, 0);
  if (c.bf16Conv && !c.bf16)  // the seed's bf16Conv only adds the convolutions to bf16
    fail("train", "bf16Conv needs bf16 (got bf16Conv true, bf16 false)");
  if (!(c.testCropRatio > 0 && c.testCropRatio <= 1))
    fail("train", "testCropRatio must be in (0, 1] (got {})", c.testCropRatio);
  in_unit("dropPath", c.dropPath, false);
  in_unit("dropout", c.dropout, false);
  in_unit("emaDecay", c.emaDecay, false);
  at_least("swaStartEpoch", c.swaStartEpoch, 0);
  at_least("swaLr", c.swaLr, 0);
  at_least("swagK", c.swagK, 1);
  at_least("swagSamples", c.swagSamples, 1);
  at_least("ttaSamples", c.ttaSamples, 1);
  if (!(c.bnMomentum > 0 && c.bnMomentum <= 1))
    fail("train",
         "bnMomentum must be in (0, 1] (got {}; PyTorch convention, weight of the new "
         "batch)",
         c.bnMomentum);
  at_least("evalEveryNEpochs", c.evalEveryNEpochs, 0);  // 0: after the last epoch only
  at_least("checkpointEveryNEpochs", c.checkpointEveryNEpochs, 1);
  validate_checkpoint_policy(c);
  if (!(c.detPriorPi > 0 && c.detPriorPi < 1))
    fail("train", "detPriorPi must be in (0, 1) (got {})", c.detPriorPi);
  if (c.anchors.size() % 2 != 0)
    fail("train", "anchors must be w,h pairs (got {} numbers)", c.anchors.size());
  in_unit("fpnAffineProb", c.fpnAffineProb, true);
  at_least("yoloClsFocalGamma", c.yoloClsFocalGamma, 0);
  at_least("yoloObjFocalGamma", c.yoloObjFocalGamma, 0);
  at_least("ddpmSteps", c.ddpmSteps, 1);
  if (!(c.betaStart > 0 && c.betaStart <= c.betaEnd && c.betaEnd < 1))
    fail("train", "DDPM betas must satisfy 0 < betaStart <= betaEnd < 1 (got {}, {})", c.betaStart,
         c.betaEnd);
  at_least("nerfSamples", c.nerfSamples, 1);
  if (!(c.nerfNear >= 0 && c.nerfNear < c.nerfFar && std::isfinite(c.nerfFar)))
    fail("train", "NeRF ray bounds must satisfy 0 <= nerfNear < nerfFar (got {}, {})", c.nerfNear,
         c.nerfFar);
  in_unit("nerfBackground", c.nerfBackground, true);
  if (c.ddpm && c.lossKind != LossKind::floatTargetMse)
    fail("train", "ddpm trains the noise prediction with floatTargetMse (got lossKind {})",
         enum_name(c.lossKind));
}

}  // namespace netspec
