// The matrix functions of the Muon and Shampoo rules (muon.cpp, shampoo.cpp), built in-graph
// from dot_general only (no SVD/eigh), and which parameters those rules take. Every other
// parameter falls back to AdamW (the partition by eligibility, rule.h). Both keep Adam's two
// state slots {"m", "v"}, so the module signature is Adam's: Muon uses m as its momentum buffer
// (v passes through), Shampoo keeps L in m and R in v (square weights only, so both have the
// weight's shape).
#pragma once
#include "hlo/builder.h"
#include "spec/param_table.h"

namespace netspec::optim {

// Muon: every 2-D weight matrix (a linearWeight parameter of rank 2; embeddings, tokens, norms,
// biases and conv kernels use AdamW) (muon.cpp).
bool muon_eligible(const ParamDesc& p);
// Shampoo (the seed's rule): a square 2-D weight matrix with both dims >= 16 (shampoo.cpp).
bool shampoo_eligible(const ParamDesc& p);

// Newton-Schulz iterations of the Muon polar projection and its quintic coefficients.
inline constexpr int kMuonNsSteps = 5;
inline constexpr double kMuonNsA = 3.4445, kMuonNsB = -4.7750, kMuonNsC = 2.0315;
// Shampoo: ridge ε·(tr(A)/n)·I added before the inverse 4th root (relative to the mean eigenvalue).
inline constexpr double kShampooEps = 1e-4;

// Coupled-Newton iterations used for A^{-1/4} of an n×n matrix with ridge kShampooEps: enough
// for the smallest eigenvalue of the trace-scaled start to reach 1 (see matrix_opt.cpp).
int shampoo_root_iterations(int64_t n);

// x·y, or x·yᵀ when yt (rank 2).
hlo::Value* mm(hlo::Builder& b, hlo::Value* x, hlo::Value* y, bool yt = false);
// xᵀ (rank 2).
hlo::Value* t2(hlo::Builder& b, hlo::Value* x);
// X ↦ the 5-step Newton-Schulz approximation of the polar factor UVᵀ of X (rank 2).
hlo::Value* newton_schulz5(hlo::Builder& b, hlo::Value* x);
// A ↦ (A + ε·tr(A)/n·I)^{-1/4} for a symmetric PSD n×n A, by the coupled Newton iteration.
hlo::Value* inverse_fourth_root(hlo::Builder& b, hlo::Value* a);

}  // namespace netspec::optim
