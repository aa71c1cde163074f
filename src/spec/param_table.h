// ParamTable: the one source of truth derived from a NetSpec. For every layer: its output
// shape, its parameter tensors (hierarchical name, shape, init rule, weight-decay flag) in the
// order signatures, checkpoints and optimizers use, its BN layers (running statistics) and its
// forward FLOPs per sample. build_param_table() (layers/param_table.h: the layer kinds' bodies
// derive it) also validates: any inconsistency throws netspec::Error
// `[layer 4 residualBlock] input channels (got 32, expected 64)`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "spec/layer.h"

namespace netspec {

// Shapes are per sample (no batch dim): images [C, H, W] (NCHW order), token sequences [T, D],
// vectors [D]. Conv weights are OIHW ([out, in/groups, kh, kw]), dense weights [out, in]
// (PyTorch layout), embeddings [vocab, dim].
struct ParamDesc {
  std::string name;  // "layers.4.block0.conv1.weight"
  Shape shape;
  ParamInit init;
  bool decay;  // weight decay applies (false for norm params, biases, tokens, layer scales)
  int layer;   // index of the owning layer
  int64_t numel() const { return num_elements(shape); }
};

// A BatchNorm layer: its weight/bias are "<name>.weight"/"<name>.bias" in the param list and its
// running statistics are "<name>.running_mean"/"<name>.running_var", both [channels].
struct BnDesc {
  std::string name;
  int64_t channels;
  int layer;
};

struct LayerInfo {
  int index;
  std::string kind;
  Shape in;
  Shape out;
  int64_t params = 0;                   // parameter elements
  int64_t flops = 0;                    // forward FLOPs per sample, 2 per multiply-accumulate
  int first_param = 0, num_params = 0;  // slice of ParamTable::params
  int first_bn = 0, num_bn = 0;         // slice of ParamTable::bns
};

struct ParamTable {
  Shape input;
  Shape output;
  std::vector<LayerInfo> layers;
  std::vector<ParamDesc> params;
  std::vector<BnDesc> bns;
  int64_t total_params() const;
  int64_t total_flops() const;
};

// Sets the class count of the net's head: the last layer with a class-count field (dense.out,
// conv2d.oc, detrHeads.nClasses, lmHead is excluded). Throws if the net has no such layer.
void set_num_classes(NetSpec& net, int classes);
// The current class count (same rule), or -1 if none.
int num_classes(const NetSpec& net);

}  // namespace netspec
