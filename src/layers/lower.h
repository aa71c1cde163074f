// Layer lowering: a table from layer kind to its forward emitter (one file per kind in
// src/layers/, each registering itself with NETSPEC_REGISTER_LAYER). An emitter gets a LowerCtx
// (builder, the layer's ParamTable slice as IR values, train/eval switch, BN running stats in eval,
// a BN batch-stat sink in train) and the input value [B, ...], and returns the output. A kind
// without an emitter is refused with its name and layer index (lower_layer), never skipped. Helpers
// shared by several kinds are declared below.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hlo/builder.h"
#include "spec/param_table.h"

namespace netspec::layers {

using hlo::Value;

// Per-channel BN statistics: mean and (biased) variance, both [C].
struct BnStats {
  Value* mean = nullptr;
  Value* var = nullptr;
  int64_t count = 0;  // train: elements averaged per channel (B·H·W), for n/(n-1) on the host
};

// Stochastic depth (dropPath): the blocks that torchvision/timm give a drop-path branch call
// LowerCtx::drop_path once per branch. Every call is recorded (the emitter counts them in a dry
// run to size the module's mask inputs and their ramped rates); when `masks` is non-empty each
// residual branch is multiplied by the next mask [B] (0 or 1/(1-p), broadcast over the sample).
struct DropPathBlock {
  int layer = 0;         // layer index
  std::string kind;      // layer kind (picks the ramp formula, see emit/drop_path.cpp)
  int block = 0;         // block ordinal inside the layer
  int branch = 0;        // branch inside the block (transformer: 0 attn, 1 mlp)
  bool residual = true;  // false: counted in the ramp, no skip connection, so no mask
};
struct DropPath {
  std::vector<DropPathBlock> blocks;  // every call, in emission order
  std::vector<Value*> masks;          // one per residual branch, in order; empty: record only
  size_t used = 0;
};

struct LowerCtx {
  hlo::Builder& b;
  const NetSpec& net;
  const LayerInfo& info;         // index, kind, per-sample in/out shapes
  std::vector<Value*> params;    // this layer's params, ParamTable order
  bool train = true;             // train: BN on batch statistics; eval: on running stats
  std::vector<BnStats> running;  // eval: this layer's BN running stats, BnDesc order
  std::vector<BnStats>* batch_stats = nullptr;  // train: each BN appends its batch mean/var
  DropPath* drop = nullptr;                     // train step with dropPath > 0 (nullptr: identity)
  // history[i]: the input of layer i ([B, ...]); history[info.index] is this layer's input.
  // Multi-scale kinds (fpnDetect) read earlier feature maps through tap().
  const std::vector<Value*>* history = nullptr;
  // A layer that defines the net's CAM features (a detector head) stores them here.
  Value** cam_features = nullptr;
  // Sync-BN (sync_bn.cpp): > 1 sums BN statistics over that many replicas with all_reduce.
  int64_t bn_sync_replicas = 1;

  // Next parameter / running stat in order; fails naming the layer when the slice runs out.
  Value* next_param();
  BnStats next_running();
  // Checks every parameter and BN was consumed (an emitter/ParamTable mismatch otherwise).
  void finish() const;
  std::string where() const;
  // The latest earlier layer input (searching back from this layer's) whose per-sample shape is
  // [ch, h, w], as the ParamTable's accounting taps it; fails naming `what` when there is none.
  Value* tap(const char* what, int64_t ch, int64_t h, int64_t w) const;
  // branch · mask[b] (see DropPath) or branch. block: the block's ordinal in this layer;
  // branch_id > 0: a further branch of the same block (same rate, own mask); residual: the block
  // has a skip connection (else it is only counted in the ramp).
  Value* drop_path(Value* branch, int block, int branch_id = 0, bool residual = true);

  size_t param_pos = 0, bn_pos = 0;
};

using Emitter = Value* (*)(LowerCtx& c, const Layer& layer, Value* x);

// The emitter for a kind, or nullptr if it is not lowered yet.
Emitter find_emitter(std::string_view kind);
// Kinds with an emitter, in spec order.
std::vector<std::string_view> lowered_kinds();
// Throws `[layer 3 swinStage] layer kind is not lowered yet (lowered: ...)` if any layer of the
// net has no emitter. Called when a module is built, before any op is emitted.
void check_lowerable(const NetSpec& net);
// Emits one layer (refuses kinds without an emitter) and checks the output shape against the
// ParamTable's per-sample shape.
Value* lower_layer(LowerCtx& c, const Layer& layer, Value* x);

// Each src/layers/<kind>.cpp ends with one registration line (no shared table to edit):
//   NETSPEC_REGISTER_LAYER(residualBlock, lower_residual_block)
// The library is linked whole-archive so these static registrars are never dropped.
struct EmitterRegistrar {
  EmitterRegistrar(std::string_view kind, Emitter e);
};
#define NETSPEC_REGISTER_LAYER(kind, fn) \
  static const ::netspec::layers::EmitterRegistrar registrar_##kind{#kind, fn};

// --- shared helpers ---
// Elementwise activation (activation.cpp).
Value* activation(hlo::Builder& b, Value* x, Activation a);
// A scalar constant broadcast to x's type.
Value* splat(hlo::Builder& b, double v, Value* like);
// Per-channel vector v [C] broadcast to x's shape along `dim`.
Value* bcast(hlo::Builder& b, Value* v, Value* like, int64_t dim);
// (low, high) padding of one spatial dim of size h for kernel k, stride s (conv2d.cpp):
// valid -> (0, 0); same -> total = max((ceil(h/s)-1)·s + k - h, 0) split by the PadStyle when
// s > 1 (xlaSame: extra row high; symmetric: (k-1)/2 both sides), xlaSame's split when s == 1.
std::pair<int64_t, int64_t> spatial_padding(int64_t h, int64_t k, int64_t s, Padding pad,
                                            PadStyle style);
// NCHW conv with OIHW weight w (groups from the weight's in-channel dim), padding per dim
// from spatial_padding (conv2d.cpp).
Value* conv(LowerCtx& c, Value* x, Value* w, int64_t stride, Padding pad);
// BatchNorm (batch_norm.cpp) over all dims but 1 (channels): train uses the batch mean and
// biased variance and reports them to c.batch_stats; eval uses the next running stats.
Value* batch_norm(LowerCtx& c, Value* x, Value* gamma, Value* beta);
// Sync-BN (sync_bn.cpp): a per-channel partial sum made global (all_reduce over the replicas when
// c.bn_sync_replicas > 1, else itself), and the element count it then covers (count·replicas).
Value* bn_replica_sum(LowerCtx& c, Value* partial_sum);
int64_t bn_replica_count(const LowerCtx& c, int64_t local_count);
// LayerNorm of x over dim `fd` (biased variance, eps NetSpec::lnEps), γ/β of x's size along fd
// (layer_norm.cpp).
Value* layer_norm(LowerCtx& c, Value* x, Value* gamma, Value* beta, int64_t fd);
// conv (no bias) + BN + activation, the torchvision Conv2dNormActivation unit (conv_bn.cpp).
Value* conv_bn_act(LowerCtx& c, Value* x, int64_t stride, Padding pad, Activation a);
// Residual shortcut (residual_block.cpp): x, or 1x1 conv (stride) + BN when the stride or the
// width changes.
Value* shortcut(LowerCtx& c, Value* x, int64_t oc, int64_t stride);

}  // namespace netspec::layers
