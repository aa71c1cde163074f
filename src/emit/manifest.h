// Module manifests: every input and output of an emitted module in order, with its name, shape
// (batch included), dtype and role, written as JSON beside the .mlir (docs/abi.md).
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"

namespace netspec::emit {

// Roles: "param", "optimizer_state", "bn_running_stat", "bn_batch_stat", "input", "label",
// "hyperparameter", "loss", "metric", "output" (logits / features), "cotangent" (vjp's ybar),
// "gradient" (vjp and optimizer gradients), "mask" (host-drawn keep masks: drop path, dropout).
struct TensorInfo {
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
  std::string role;
  int64_t count = 0;  // bn_batch_stat: elements averaged (n for the unbiased n/(n-1) correction)
  double rate = 0;    // mask: drop probability p (values are 0 or 1/(1-p))
  bool sharded = false;  // data parallel: each replica gets its shard (dim 0) of the global batch
};

struct Manifest {
  std::string module;  // forward | eval | cam | train_step | vjp | optimizer | loss
  std::string net;
  int64_t batch = 0;     // per replica (a shard) when replicas > 1
  int replicas = 1;      // data parallel: the module runs as this many replicas (all_reduce)
  bool sync_bn = false;  // replicas > 1: BN statistics over the global batch
  std::string entry = "main";
  std::vector<TensorInfo> inputs, outputs;
  std::string to_json() const;  // pretty JSON, stable key order
};

}  // namespace netspec::emit
