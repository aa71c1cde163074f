// PyTorch state dicts (torchvision, timm, the peers' nets) onto netspec's ParamTable names, the
// mapping of docs/reference-weights.md and tools/torchvision_to_safetensors.py: num_batches_tracked
// dropped; the k-th parameter of the file (names not ending in .running_mean/.running_var) goes
// to the k-th netspec parameter, shapes equal; each BN's running statistics are those of the
// module whose .weight became the BN's gamma. When the file's order is not the net's (timm's Swin,
// a safetensors library file sorted by name), the tensors are placed by their module tree: each
// module's tensors stay together, siblings reordered only where shapes demand it.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/safetensors.h"
#include "core/torch_pickle.h"
#include "spec/param_table.h"

namespace netspec::train {

struct ConvertedWeights {
  // netspec names, f32: every parameter in ParamTable order, then running_mean, running_var per
  // BN (a checkpoint's layout without optimizer state; `train --init-from` and eval load it).
  SafeTensors st;
  std::vector<std::pair<std::string, std::string>> mapping;  // (netspec name, file name)
  int64_t batches_tracked = 0;                               // num_batches_tracked tensors dropped
  std::vector<std::string> unused;  // auxiliary-classifier tensors left out (GoogLeNet's aux1/2)
  bool reordered = false;           // placed by module tree and shapes, not by file order
};

// Fails (exit 2 in the CLI) naming the file key, the netspec name and both shapes on a mismatch.
// head_may_differ: the head's tensors (the last parameterized layer) may have other sizes of the
// same rank (fine-tuning at another class count: `train --init-from W.pth --classes N`).
ConvertedWeights convert_state_dict(const TorchTensors& in, const ParamTable& t,
                                    const std::string& where, bool head_may_differ = false);

}  // namespace netspec::train
