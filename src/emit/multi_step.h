// The K-step train module (engines whose calls are expensive, e.g. IREE's tools: one process per
// call): @main runs n <= K fused train steps in one stablehlo.while over a stack of K batches, so
// the parameters and optimizer state cross the call boundary once per n steps. Step j reads batch
// j, its masks, lr[j] and step[j]; the loss and the BN batch statistics of every step come back
// stacked [K, ...] (rows >= n stay 0) so the host applies the running-stat EMA step by step.
#pragma once
#include <cstdint>

#include "emit/emit.h"

namespace netspec::emit {

// Wraps `step` (a train_step module, one replica) into
//   @main(P, S, x[K,B,..], labels[K,B,..], lr[K], step[K], masks[K,..]..., n_steps: i32)
//     -> (P', S', loss[K], bn stats[K, C]...)
// with the inputs and outputs in the step's manifest order ("n_steps" last) and manifest module
// "train_steps". Steps j < n_steps run in order, each exactly the single step's ops (inlined), so
// n calls of `step` and one call here give the same values. Throws for k < 1, a module that is not
// a one-replica train_step, or a state output without its input.
Emitted emit_multi_step(const Emitted& step, int64_t k);

}  // namespace netspec::emit
