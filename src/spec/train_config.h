// TrainConfig: every training knob with its default and a one-line meaning, generated from one
// X-macro list (NETSPEC_TRAIN_FIELDS) so the struct, the JSON reader/writer, validation messages
// and docs/spec-format.md never disagree. Field names are the spec-file keys (camelCase).
// Conventions: bnMomentum weighs the NEW batch (PyTorch), 0 for a rate/prob/count means "off".
#pragma once
#include <string>
#include <vector>

#include "spec/enums.h"

namespace netspec {

using DoubleList = std::vector<double>;

// F(type, name, default, meaning)
// clang-format off
#define NETSPEC_TRAIN_FIELDS(F) \
  F(DatasetKind, dataset, DatasetKind::mnist, "dataset to train and evaluate on") \
  F(double, learningRate, 1e-3, "peak learning rate (reached after warmup)") \
  F(int, batchSize, 128, "samples per optimizer step (per accumulation micro-step)") \
  F(int, epochs, 10, "passes over the training set") \
  F(int, seed, 0, "seed for init, shuffling and augmentation") \
  F(OptimizerKind, optimizer, OptimizerKind::adam, "update rule (adam is AdamW when weightDecay > 0)") \
  F(double, momentum, 0.9, "SGD momentum / RMSprop momentum / Adam beta1") \
  F(bool, nesterov, false, "Nesterov momentum for sgd") \
  F(double, rmspropDecay, 0.9, "RMSprop squared-gradient EMA decay (alpha)") \
  F(double, rmspropEps, 1e-8, "RMSprop denominator epsilon") \
  F(double, weightDecay, 0.0, "L2 / decoupled weight decay coefficient") \
  F(bool, wdExcludeNormBias, true, "exempt norm params, biases, tokens from weight decay") \
  F(double, gradClipNorm, 0.0, "clip the global gradient L2 norm to this (0: off)") \
  F(double, headLrMult, 1.0, "learning-rate multiplier for the last parameterized layer") \
  F(int, gradAccumSteps, 1, "micro-batches accumulated per optimizer step") \
  F(Schedule, schedule, Schedule::constant, "learning-rate schedule after warmup") \
  F(double, warmupEpochs, 0.0, "linear warmup length in epochs") \
  F(double, expLRDecayRate, 0.97, "exponential schedule: factor per decay period") \
  F(double, expLRDecayEpochs, 2.4, "exponential schedule: decay period in epochs") \
  F(double, labelSmoothing, 0.0, "label smoothing epsilon for cross-entropy losses") \
  F(LossKind, lossKind, LossKind::classCE, "training loss") \
  F(DoubleList, lossWeights, {}, "per-class weights for perPixelWeightedCE") \
  F(double, focalGamma, 2.0, "focusing exponent γ of the focal and perPixelFocalCE losses") \
  F(bool, augment, false, "standard flips/crops augmentation for the dataset") \
  F(bool, randomResizedCrop, false, "RandomResizedCrop (scale 0.08-1, ratio 3/4-4/3) + flip of whole images, replacing augment's crop") \
  F(bool, mixup, false, "mixup of sample pairs") \
  F(double, mixupAlpha, 0.8, "mixup Beta(alpha, alpha) parameter") \
  F(bool, cutmix, false, "cutmix of sample pairs") \
  F(double, cutmixAlpha, 1.0, "cutmix Beta(alpha, alpha) parameter") \
  F(bool, knnMixup, false, "mix each sample with a nearest neighbour instead of a random one") \
  F(double, knnMixupAlpha, 1.0, "kNN-mixup Beta(alpha, alpha) parameter (the seed's default)") \
  F(bool, randomErasing, false, "random erasing of a rectangle") \
  F(double, randomErasingProb, 0.25, "probability of random erasing per sample") \
  F(bool, randAugment, false, "RandAugment policy") \
  F(int, randAugmentN, 2, "RandAugment ops per sample") \
  F(double, randAugmentM, 9.0, "RandAugment magnitude (0..10)") \
  F(bool, randAugmentGeometric, true, "RandAugment includes geometric ops") \
  F(double, randAugmentMstd, 0.5, "RandAugment magnitude noise std") \
  F(bool, randAugmentIncreasing, false, "RandAugment magnitudes increase with M") \
  F(bool, autoAugment, false, "AutoAugment (ImageNet policy)") \
  F(int, repeatedAug, 1, "repeated augmentation: copies of each sample per epoch") \
  F(int, trainRes, 0, "training resolution (0: the net's input size)") \
  F(double, testCropRatio, 0.875, "eval center-crop ratio (resize to trainRes/ratio)") \
  F(double, dropPath, 0.0, "stochastic-depth drop rate (max, linear over blocks)") \
  F(double, dropout, 0.0, "dropout before the classifier") \
  F(bool, useEMA, false, "keep an exponential moving average of the weights") \
  F(double, emaDecay, 0.9999, "EMA decay per step") \
  F(bool, useSWA, false, "stochastic weight averaging") \
  F(int, swaStartEpoch, 0, "first epoch averaged by SWA") \
  F(double, swaLr, 0.0, "constant learning rate from swaStartEpoch on (0: the schedule's)") \
  F(bool, useSWAG, false, "SWA-Gaussian posterior") \
  F(int, swagK, 20, "SWAG low-rank deviation columns") \
  F(int, swagSamples, 30, "SWAG samples averaged at evaluation") \
  F(bool, useTTA, false, "test-time augmentation") \
  F(int, ttaSamples, 2, "TTA views averaged per sample") \
  F(bool, runningBN, true, "keep BN running statistics for eval (else batch stats)") \
  F(bool, syncBN, false, "BN batch statistics over all data-parallel replicas") \
  F(double, bnMomentum, 0.1, "BN running-stat momentum, weight of the NEW batch (PyTorch)") \
  F(bool, compensateBNMomentum, true, "gradAccumSteps K > 1: each micro-batch's running-stat update uses 1-(1-bnMomentum)^(1/K)") \
  F(InitKind, init, InitKind::he, "parameter init family") \
  F(bool, bf16, false, "bf16 operands for every matmul and patchify conv (f32 accumulation, f32 weights)") \
  F(bool, bf16Conv, false, "with bf16: also every other non-depthwise convolution") \
  F(int, evalEveryNEpochs, 1, "evaluate every N epochs and after the last (0: the last only)") \
  F(int, checkpointEveryNEpochs, 1, "checkpoint every N epochs") \
  F(std::string, monitor, "", "metric best, saveTopK, early stop and plateau follow: train_loss or a val_* column of metrics.csv (empty: the task's score, val_score)") \
  F(std::string, monitorMode, "auto", "min | max | auto (auto: min for *loss and *bpc, else max)") \
  F(int, saveTopK, 0, "keep the K best checkpoints by the monitor as checkpoints/epoch=E-METRIC=V.safetensors (0: none)") \
  F(bool, keepSnapshots, false, "keep every checkpointEveryNEpochs save of last as checkpoints/epoch=E.safetensors") \
  F(int, earlyStopPatience, 0, "stop after this many evaluations of the monitor without improvement (0: off)") \
  F(double, earlyStopMinDelta, 0.0, "early stop: a change of at most this is no improvement") \
  F(double, plateauFactor, 0.1, "plateau schedule: lr multiplier of each reduction") \
  F(int, plateauPatience, 10, "plateau schedule: evaluations without improvement tolerated (reduce after one more)") \
  F(int, plateauCooldown, 0, "plateau schedule: evaluations after a reduction during which none is counted") \
  F(double, plateauMinLr, 0.0, "plateau schedule: lower bound of the lr") \
  F(double, plateauThreshold, 1e-4, "plateau schedule: improvement needed, in the monitor's units") \
  F(std::string, bootstrapBackbone, "", "checkpoint to initialize a backbone from (empty: none)") \
  F(std::string, bootstrapRanges, "", "layers loaded from it: \"0-8,10\", or floats:N (the first N floats)") \
  F(std::string, freeze, "", "comma-separated parameter-name prefixes kept fixed (fine-tuning)") \
  F(bool, headPriorBias, false, "init the classifier bias to log class priors") \
  F(double, detPriorPi, 0.01, "detector objectness prior probability for the head bias") \
  F(bool, useDiouBox, false, "DIoU box regression loss for detectors") \
  F(DoubleList, anchors, {}, "detector anchors as w,h pairs in pixels") \
  F(DoubleList, fpnScales, {}, "FPN level strides used by the detector") \
  F(double, fpnAffineScale, 0.5, "detector affine augment: max scale change") \
  F(double, fpnAffineTranslate, 0.1, "detector affine augment: max translation fraction") \
  F(double, fpnAffineProb, 0.0, "detector affine augment probability (0: off)") \
  F(double, fpnAffineWhThrPx, 2.0, "drop boxes narrower than this after affine (pixels)") \
  F(double, fpnAffineAreaThr, 0.1, "drop boxes keeping less than this area fraction") \
  F(DoubleList, yoloClsWeights, {}, "per-class weights in the YOLO class loss") \
  F(double, yoloClsFocalGamma, 0.0, "focal exponent in the YOLO class loss (0: plain CE)") \
  F(double, yoloObjFocalGamma, 0.0, "focal exponent in the YOLO objectness BCE (0: plain BCE)") \
  F(bool, ddpm, false, "DDPM: train the net to predict the noise of x_t (t/T in the last input channel)") \
  F(int, ddpmSteps, 1000, "DDPM: diffusion steps T") \
  F(double, betaStart, 1e-4, "DDPM: linear beta schedule, beta_1") \
  F(double, betaEnd, 0.02, "DDPM: linear beta schedule, beta_T") \
  F(BetaSchedule, betaSchedule, BetaSchedule::linear, "DDPM: beta_t linear (betaStart..betaEnd) or cosine (Nichol & Dhariwal 2021, s = 0.008, beta <= 0.999)") \
  F(int, nerfSamples, 64, "NeRF: points sampled along each ray (nerfRenderMse)") \
  F(double, nerfNear, 2.0, "NeRF: ray distance where sampling starts") \
  F(double, nerfFar, 6.0, "NeRF: ray distance where sampling ends") \
  F(double, nerfBackground, 1.0, "NeRF: grey level behind the scene (1 white, 0 black)")
// clang-format on

#define NS_TRAIN_DECL_(T, n, d, doc) T n = d;
struct TrainConfig {
  NETSPEC_TRAIN_FIELDS(NS_TRAIN_DECL_)
  bool operator==(const TrainConfig&) const = default;
  // v(name, member, meaning) for every field in declaration order.
  template <class V>
  void visit(V&& v) {
#define NS_TRAIN_VISIT_(T, n, d, doc) v(#n, n, doc);
    NETSPEC_TRAIN_FIELDS(NS_TRAIN_VISIT_)
  }
  template <class V>
  void visit(V&& v) const {
    NETSPEC_TRAIN_FIELDS(NS_TRAIN_VISIT_)
#undef NS_TRAIN_VISIT_
  }
};
#undef NS_TRAIN_DECL_

// Range checks: `[train] learningRate must be > 0 (got -1)`. Throws netspec::Error.
void validate(const TrainConfig& c);

}  // namespace netspec
