// Module assemblers: turn a NetSpec into StableHLO modules (forward, eval, cam, train_step, vjp,
// optimizer, and the bare loss used by gradient checks), each with its manifest. Forward, eval,
// cam and the train step come from ONE traversal (emit_forward_graph) with a train/eval switch.
// Layers without an emitter and unlowered losses/optimizers are refused before any op is built.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "emit/manifest.h"
#include "hlo/ir.h"
#include "layers/lower.h"
#include "losses/loss.h"
#include "optim/optimizer.h"

namespace netspec {
#define NETSPEC_MODULE_KINDS(X) \
  X(forward) X(eval) X(cam) X(train_step) X(vjp) X(optimizer) X(loss)
NETSPEC_ENUM(ModuleKind, NETSPEC_MODULE_KINDS)
}  // namespace netspec

namespace netspec::emit {

struct EmitOptions {
  int64_t batch = 1;
  DType dtype = DType::kF32;
  losses::LossOptions loss;
  optim::OptimConfig optim;
  // Takes loss, label smoothing, focal gamma and the optimizer fields from a TrainConfig.
  static EmitOptions from_train(const TrainConfig& t, int64_t batch);
};

struct Emitted {
  std::unique_ptr<hlo::Module> module;
  Manifest manifest;
};

// Builds the module `kind` for `net` (entry @main). Throws netspec::Error naming the first layer
// that is not lowered, or the unlowered loss / optimizer.
Emitted emit_module(const NetSpec& net, ModuleKind kind, const EmitOptions& o);

struct ForwardOut {
  hlo::Value* logits = nullptr;
  hlo::Value* cam_features = nullptr;  // input of the last globalAvgPool (nullptr if none)
  std::vector<layers::BnStats> batch_stats;  // train: one per BnDesc, in order
};
// The one traversal: emits every layer at b's position. `running` (eval only) holds one entry
// per BnDesc of the table.
ForwardOut emit_forward_graph(hlo::Builder& b, const NetSpec& net, const ParamTable& table,
                              const std::vector<hlo::Value*>& params, hlo::Value* x, bool train,
                              const std::vector<layers::BnStats>& running = {});

}  // namespace netspec::emit
