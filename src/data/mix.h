// Batch-level augmentation of the host loader, after the per-sample crop/flip: mixup / cutmix
// with soft labels (timm's Mixup, mode 'batch', correct_lam) and random erasing (torchvision's
// RandomErasing, value 0). Every draw comes from (seed, epoch, batch index) or (seed, epoch,
// sample index) through counter-based hashes, so a run repeats bit for bit.
//   mixup:  x = λ·x + (1-λ)·flip(x), λ ~ Beta(α, α) (flip: the batch in reverse order)
//   cutmix: the box of flip(x) pasted into x; side ratio √(1-λ): cut = int(H·√(1-λ)), centre
//           (cy, cx) uniform, rows [cy - cut/2, cy + (cut+1)/2) clipped; λ = 1 - box area / (H·W)
//   soft target = λ·y1 + (1-λ)·flip(y1), y1 = one-hot with smoothing ε: on 1 - ε + ε/N, off ε/N.
// A batch is mixed with probability prob; with both on, cutmix with probability switch_prob.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "spec/train_config.h"

namespace netspec::data {

struct MixConfig {
  double mixup_alpha = 0, cutmix_alpha = 0;  // 0: off
  double knn_alpha = 0;                      // > 0: kNN-mixup instead of both
  double prob = 1, switch_prob = 0.5;
  double smoothing = 0;
  int64_t classes = 0;
  bool any() const { return mixup_alpha > 0 || cutmix_alpha > 0 || knn_alpha > 0; }
  static MixConfig from_train(const TrainConfig& c, int64_t classes);
};

// The random numbers of one batch: uniforms u_prob, u_switch, the Beta draw and the box centre.
struct MixDraw {
  double u_prob = 1, u_switch = 1, beta = 1;
  int64_t cy = 0, cx = 0;
};
MixDraw mix_draw(const MixConfig& c, uint64_t seed, int64_t epoch, int64_t batch, int64_t h,
                 int64_t w);

// Mixes x [B, C, H, W] (f32, in place) with its reverse and returns the soft targets [B, N] of the
// class labels y [B]; lam_out gets the (corrected) λ, 1 when the batch was not mixed.
Tensor apply_mix(const MixConfig& c, const MixDraw& d, Tensor& x, const Tensor& y,
                 double* lam_out = nullptr);
// kNN-mixup (the seed's): each sample is mixed with its nearest other sample of the batch in
// pixel space (squared L2, lowest index on ties) instead of the reversed batch:
// x_i = λ·x_i + (1-λ)·x_nn(i), targets likewise, λ ~ Beta(α, α) per batch (d.beta).
Tensor apply_knn_mix(const MixConfig& c, const MixDraw& d, Tensor& x, const Tensor& y);
// The nearest other row of each row of x [B, ...] (squared L2, lowest index on ties).
std::vector<int64_t> nearest_rows(const Tensor& x);

// One-hot targets [B, N] with smoothing ε (what an unmixed batch feeds softLabelCE / bce).
Tensor soft_targets(const Tensor& y, int64_t classes, double smoothing);

// Beta(a, b) from two Gamma draws (Marsaglia-Tsang), driven by the counter-based stream `key`.
double beta_sample(double a, double b, uint64_t key);
// Uniform in [0, 1) from a key.
double uniform01(uint64_t key);

// Random erasing (torchvision RandomErasing(p, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0)):
// with probability p, up to 10 attempts of area fraction s ~ U(scale), aspect r = exp(U(log
// ratio)), h = round(√(H·W·s·r)), w = round(√(H·W·s/r)) (half to even); the first with h < H and w
// < W erases rows [i, i+h), cols [j, j+w), i ~ U{0..H-h}, j ~ U{0..W-w}, in every channel.
struct EraseBox {
  bool on = false;
  int64_t i = 0, j = 0, h = 0, w = 0;
};
// The uniforms one sample draws (u[0]: the p test; then 4 per attempt: scale, log ratio, i, j).
std::vector<double> erase_uniforms(uint64_t seed, int64_t epoch, int64_t sample);
EraseBox erase_box(const std::vector<double>& u, double p, int64_t h, int64_t w);
// Erases sample `row` of x [B, C, H, W] (f32) inside the box (value 0).
void erase(Tensor& x, int64_t row, const EraseBox& b);

}  // namespace netspec::data
