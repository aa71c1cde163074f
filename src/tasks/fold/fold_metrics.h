// The metrics AlphaFold 2 reports, on the host in f64 for one chain of L residues, each with its
// frame (R row-major, t = Cα in Å: 12 values) and a mask (0: padding, not scored):
//   FAPE (Alg. 28, backbone, Cα points): mean over masked (i, j) of min(|x_ij - x̂_ij|, clamp),
//     x_ij = R_iᵀ(t_j - t_i); in Å (the loss divides it by 10 Å and adds 1e-4 Å² under the root);
//   lDDT-Cα (AF2's lddt): over pairs i ≠ j with true distance < 15 Å, the mean over the
//     thresholds 0.5, 1, 2, 4 Å of [|d_ij - d̂_ij| < threshold], × 100;
//   distogram cross-entropy (1.9.8): mean over masked pairs of -log softmax(logits_ij)[bin of the
//     true Cα distance], K bins with K - 1 edges linspace(2.3125, 21.6875), in nats.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace netspec::tasks::fold {

using Frame = std::array<double, 12>;

double fape(const std::vector<Frame>& pred, const std::vector<Frame>& truth,
            const std::vector<double>& mask, double clamp = 10, double eps = 0);
double lddt_ca(const std::vector<Frame>& pred, const std::vector<Frame>& truth,
               const std::vector<double>& mask, double cutoff = 15);
// logits [L, L, K] row-major.
double distogram_ce(const std::vector<double>& logits, int64_t bins,
                    const std::vector<Frame>& truth, const std::vector<double>& mask);
// The distogram bin of a distance d (Å) among `bins`: the number of edges below d.
int64_t distogram_bin(double d, int64_t bins);

// The scores of chain i of a batch: predictions out f32 [B, L, 12 + L·K] (a structureModule with
// frames), labels y f32 [B, L, 13]. loss is af2Fold's: FAPE (+1e-4 Å² under the root) / 10 Å +
// 0.3 · CE (the CE term 0 without a distogram head).
struct ChainScores {
  double loss = 0, fape = 0, lddt = 0, dist_ce = 0;
};
ChainScores score_chain(const Tensor& out, const Tensor& y, int64_t i);
// Chain i's frames and mask from labels y [B, L, 13] or predictions [B, L, >= 12].
std::vector<Frame> frames_at(const Tensor& t, int64_t i);

}  // namespace netspec::tasks::fold
