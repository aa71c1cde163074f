// In-graph training losses: logits [B, N] (+ labels) -> scalar mean loss, one file per family.
// Label layout per loss (label_type): classCE / focal use class indices i32 [B]; softLabelCE and
// bce take f32 [B, N] targets (probabilities / multi-hot); floatTargetMse takes targets shaped
// like the logits; tokenCE takes logits [B, T, V] and token labels i32 [B, T] (kIgnoreIndex skips).
// Softmax and logsumexp subtract the max. Unlowered kinds are refused by name.
#pragma once
#include "hlo/builder.h"
#include "spec/enums.h"

namespace netspec::losses {

using hlo::Value;

// tokenCE labels equal to this are ignored (PyTorch's CrossEntropyLoss ignore_index default).
constexpr int32_t kIgnoreIndex = -100;

struct LossOptions {
  LossKind kind = LossKind::classCE;
  double label_smoothing = 0;  // classCE: q = (1-ε)·onehot + ε/N
  double focal_gamma = 0;      // classCE with γ > 0 is the focal loss -(1-p_t)^γ·log p_t
};

bool is_lowered(LossKind k);
// The labels' type for logits of type `logits` ([B, N]); throws for unlowered kinds.
hlo::Type label_type(const LossOptions& o, const hlo::Type& logits);
// Scalar loss (mean over the batch; bce and mse: mean over every element).
Value* emit_loss(hlo::Builder& b, const LossOptions& o, Value* logits, Value* labels);

// log softmax over the last dim: z - max - log Σ exp(z - max).
Value* log_softmax(hlo::Builder& b, Value* z);
Value* class_ce(hlo::Builder& b, Value* logits, Value* labels, double smoothing, double gamma);
// Per-token CE: -Σ_{b,t: y≠ignore} log softmax(z[b,t])[y] / #{y ≠ ignore} (0 if all ignored).
Value* token_ce(hlo::Builder& b, Value* logits, Value* labels);
Value* soft_label_ce(hlo::Builder& b, Value* logits, Value* targets);
Value* bce_with_logits(hlo::Builder& b, Value* logits, Value* targets);
Value* mse(hlo::Builder& b, Value* pred, Value* targets);
// scale · Σ x over every element (a scalar).
Value* mean_of_sum(hlo::Builder& b, Value* x, double scale);

}  // namespace netspec::losses
