// RandAugment (timm rand-mM-nN-mstdS[-inc1], its AugmentOp / RandAugment semantics) and
// AutoAugment's ImageNet policy (timm 'original', Cubuk et al. 2018: 25 sub-policies of two
// ops) over the PIL-semantics ops of image_ops.h. Per op: applied with probability p
// (RandAugment 0.5), magnitude M (+ N(0, mstd) noise) clipped to [0, 10], timm's level
// mappings (rotate 30·M/10°, shear 0.3·M/10, translate 0.45·M/10 of the width/height, enhance
// 1.8·M/10 + 0.1 or with inc 1 ± 0.9·M/10, posterize 4·M/10 bits (inc: 4 - that; AutoAugment:
// + 4), solarize 256·M/10 (inc: 256 - that), solarize-add 110·M/10), a random sign on the
// signed ones. Geometric ops use NEAREST (torchvision's RandAugment default; timm draws
// bilinear/bicubic) and fill 128 (timm's default). randAugmentGeometric = false keeps the seed's
// colour-only set {identity, brightness, contrast, color, autocontrast}.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/image_ops.h"

namespace netspec::data {

// The random numbers an image's policy uses, in timm's call order: op indices (numpy's
// choice), uniforms (random.random) and normals (random.gauss); logged for the reference test.
class AugDraws {
 public:
  explicit AugDraws(uint64_t key) : key_(key) {}
  int64_t index(int64_t n);
  double uniform();
  double gauss(double mean, double std);
  std::vector<int64_t> indices;
  std::vector<double> uniforms, gausses;

 private:
  uint64_t key_, i_ = 0;
};

// The draws of sample `index` in `epoch` (what the loader uses).
AugDraws sample_draws(uint64_t seed, int64_t epoch, int64_t index);

struct RandAugmentConfig {
  int n = 2;
  double m = 9, mstd = 0.5, prob = 0.5;
  bool increasing = false, geometric = true;
};

// The op names of the set in use (timm's names).
std::vector<std::string> rand_augment_ops(const RandAugmentConfig& c);
// One op by timm's name at magnitude m (already clipped), signs from d.
Image8 apply_op(const std::string& name, const Image8& im, double m, AugDraws& d);
Image8 rand_augment(const Image8& im, const RandAugmentConfig& c, AugDraws& d);
Image8 auto_augment_imagenet(const Image8& im, AugDraws& d);

}  // namespace netspec::data
