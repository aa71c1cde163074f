// `netspec emit NET --jax`: a standalone Python program (jax, jax.numpy, jax.lax) for a net: its
// ParamTable, init, forward (train / eval), loss, the optimizer and a train_step whose backward is
// jax.value_and_grad's. The forward, loss and optimizer are netspec's own lowering (the same IR as
// the StableHLO modules) translated op by op, one Python function per layer (docs/jax.md).
#pragma once
#include <string>

#include "core/dtype.h"
#include "spec/layer.h"
#include "spec/train_config.h"

namespace netspec::jax {

// The program text for `net` at batch size `batch` (shapes are static), its floats in `dtype`
// (f32, or f64: the IR widened as gradcheck does, jax_enable_x64 set on import). Throws
// netspec::Error naming the first layer, loss or optimizer that is not lowered, or an op with no
// JAX form.
std::string emit_program(const NetSpec& net, const TrainConfig& tc, int64_t batch,
                         DType dtype = DType::kF32);

}  // namespace netspec::jax
