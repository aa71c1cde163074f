// The loss-gradient module of gradient accumulation: @main(logits, labels, w) -> (loss, dlogits)
// with loss the training loss (losses::emit_loss, a mean over the micro-batch) and
// dlogits = w·∂loss/∂logits from autodiff. Weighting micro-batch k by w = n_k/N makes the summed
// gradients the gradient of the mean over all N samples, for every loss that is a mean over
// equally sized per-sample terms (classCE, focal, softLabelCE, bce, floatTargetMse, tokenCE
// without ignored tokens, per-pixel losses).
#pragma once
#include "emit/emit.h"
#include "emit/signature.h"

namespace netspec::emit {

// logits: the forward module's first output type; o.loss as for the train step (for_net applied).
std::unique_ptr<hlo::Module> emit_loss_grad(const NetSpec& net, const hlo::Type& logits,
                                            const EmitOptions& o);

}  // namespace netspec::emit
