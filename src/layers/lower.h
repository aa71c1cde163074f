// Layer kinds: one file per kind in src/layers/, each a body written once against a LowerCtx and
// registered with NETSPEC_REGISTER_LAYER. The body validates its fields, DECLARES each parameter
// where it uses it (c.param / c.bn, or a shared helper below that declares its own) and emits IR.
// Run in accounting mode (build_param_table, layers/param_table.h) on a scratch builder at
// batch 1, the declarations become the ParamTable (names, shapes, init, decay, BN list) and the
// emitted dot_general / convolution ops its FLOPs; run in lowering mode (emit/), each declaration
// returns the next function argument after checking its name and shape against the ParamTable.
// So the parameter order of the two modes matches by construction. A kind whose IR is not written
// yet keeps its accounting in the same form and ends in c.not_lowered(shape): lowering refuses it
// by name and layer index, never skips it.
#pragma once
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/checked.h"
#include "core/error.h"
#include "hlo/builder.h"
#include "layers/param_table.h"
#include "spec/param_table.h"

namespace netspec::layers {

using hlo::Value;

// Per-channel BN statistics: mean and (biased) variance, both [C].
struct BnStats {
  Value* mean = nullptr;
  Value* var = nullptr;
  int64_t count = 0;  // train: elements averaged per channel (B·H·W), for n/(n-1) on the host
};

// A declared BatchNorm: γ, β and (eval) its running statistics.
struct Bn {
  Value* gamma = nullptr;
  Value* beta = nullptr;
  BnStats running;
};

// Stochastic depth (dropPath): the blocks that torchvision/timm give a drop-path branch call
// LowerCtx::drop_path once per branch. Every call is recorded (the emitter counts them in a dry
// run to size the module's mask inputs and their ramped rates); when `masks` is non-empty each
// residual branch is multiplied by the next mask [B] (0 or 1/(1-p), broadcast over the sample).
struct DropPathBlock {
  int layer = 0;         // layer index
  std::string kind;      // layer kind (its traits give the ramp, see emit/drop_path.cpp)
  int block = 0;         // block ordinal inside the layer
  int branch = 0;        // branch inside the block (transformer: 0 attn, 1 mlp)
  bool residual = true;  // false: counted in the ramp, no skip connection, so no mask
};
struct DropPath {
  std::vector<DropPathBlock> blocks;  // every call, in emission order
  std::vector<Value*> masks;          // one per residual branch, in order; empty: record only
  size_t used = 0;
};

// The norm conv_bn_act applies in this layer: BatchNorm (every kind's default) or, for kinds with
// a `norm` field set to gn, GroupNorm with `groups` groups (set by set_conv_norm, conv_bn.cpp).
struct ConvNorm {
  Norm kind = Norm::bn;
  int64_t groups = 32;
};

// A feature map [c, h, w] (per sample): shape arithmetic of the kinds not lowered yet.
struct Fm {
  int64_t c, h, w;
  Shape shape() const { return {c, h, w}; }
};

// Accounting mode state (set by build_param_table): the table being built, this layer's row,
// the scratch function whose arguments stand for the declared parameters.
struct Accounting {
  ParamTable& table;
  LayerInfo& info;
  hlo::Block* body;
  std::vector<Shape>& skips;  // side stack (unetDown pushes its input, unetUp pops, pairTile...)
  int64_t explicit_flops = 0;
};

struct LowerCtx {
  hlo::Builder& b;
  const NetSpec& net;
  const LayerInfo& info;         // index, kind, per-sample in (and, lowering, out) shapes
  std::vector<Value*> params;    // lowering: this layer's params, ParamTable order
  bool train = true;             // train: BN on batch statistics; eval: on running stats
  std::vector<BnStats> running;  // eval: this layer's BN running stats, BnDesc order
  std::vector<BnStats>* batch_stats = nullptr;  // train: each BN appends its batch mean/var
  DropPath* drop = nullptr;                     // train step with dropPath > 0 (nullptr: identity)
  // history[i]: the input of layer i ([B, ...]); history[info.index] is this layer's input.
  // Multi-scale kinds (fpnDetect) read earlier feature maps through tap().
  const std::vector<Value*>* history = nullptr;
  // A layer that defines the net's CAM features (a detector head) stores them here.
  Value** cam_features = nullptr;
  const ParamTable* table = nullptr;  // lowering: declarations are checked against it
  Accounting* acct = nullptr;         // set: accounting mode
  // Sync-BN (sync_bn.cpp): > 1 sums BN statistics over that many replicas with all_reduce.
  int64_t bn_sync_replicas = 1;

  bool accounting() const { return acct != nullptr; }
  std::string where() const;
  template <typename... A>
  [[noreturn]] void fail(fmt::format_string<A...> f, A&&... a) const {
    netspec::fail(where(), f, std::forward<A>(a)...);
  }
  template <typename... A>
  void check(bool ok, fmt::format_string<A...> f, A&&... a) const {
    if (!ok) fail(f, std::forward<A>(a)...);
  }

  // --- validation of the layer's fields against its per-sample input info.in ---
  // Field must be >= lo: "ic must be >= 1 (got 0)". (Int fields get this generically, see
  // LayerTraits::field_min; bodies call it for derived values.)
  void positive(const char* field, int64_t v, int64_t lo = 1) const;
  // Input must be an image with `c` channels (c < 0: any); returns it.
  Fm image(int64_t c) const;
  // Input must be a token sequence [T, d] (d < 0: any); returns T.
  int64_t tokens(int64_t d) const;
  // Input must be a vector [d]; returns d.
  int64_t vec(int64_t d) const;
  void channels_match(const char* what, int64_t got, int64_t expected) const;

  // --- declarations: names are "layers.<index>.<scope...>.<leaf>" ---
  // The parameter `leaf` [shape]: accounting records it and returns a fresh value of that shape;
  // lowering returns the next parameter argument (its name and shape must be the table's).
  Value* param(const std::string& leaf, const Shape& shape, ParamInit init, bool decay);
  // BatchNorm "<name>.weight" / ".bias" [ch] and its running statistics (one BnDesc).
  Bn bn(const std::string& name, int64_t ch);
  std::string full(const std::string& leaf) const;
  std::vector<std::string> scope{};
  // FLOPs the emitted dot_general / convolution ops do not show (a loop, a kind not lowered).
  // A negative count is a product that wrapped: refused, never summed.
  void add_flops(int64_t f) {
    if (f < 0) fail("the layer's FLOP count overflows 64-bit integers (sizes too large)");
    if (acct) acct->explicit_flops = checked_add(acct->explicit_flops, f, full("flops"));
  }
  // The end of a kind not lowered yet: accounting returns a placeholder [1, out...]; lowering
  // refuses the layer by kind and index.
  Value* not_lowered(const Shape& out);

  // The latest earlier layer input (searching back from this layer's) whose per-sample shape is
  // [ch, h, w]; fails naming `what` when there is none.
  Value* tap(const char* what, int64_t ch, int64_t h, int64_t w) const;
  // branch · mask[b] (see DropPath) or branch. block: the block's ordinal in this layer;
  // branch_id > 0: a further branch of the same block (same rate, own mask); residual: the block
  // has a skip connection (else it is only counted in the ramp).
  Value* drop_path(Value* branch, int block, int branch_id = 0, bool residual = true);
  // Checks every parameter and BN was declared (lowering).
  void finish() const;

  size_t param_pos = 0, bn_pos = 0;
  ConvNorm conv_norm{};  // see ConvNorm
};

// RAII name scope: Scope s(c, "block0") makes c.param("conv1.weight") "layers.i.block0.conv1...".
class Scope {
 public:
  Scope(LowerCtx& c, std::string s) : c_(c) { c_.scope.push_back(std::move(s)); }
  ~Scope() { c_.scope.pop_back(); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  LowerCtx& c_;
};

// "a" + "weight" -> "a.weight"; "" + "weight" -> "weight".
std::string dot(const std::string& a, const char* b);

using Emitter = Value* (*)(LowerCtx& c, const Layer& layer, Value* x);

// What the rest of the system needs to know about a kind, declared at its registration so that
// emit/, losses/, train/ and cli/ never name a kind.
enum class Ramp { none, last, count };  // drop-path rate i/(N-1) (ConvNeXt, ViT) | i/N (EffNet)
struct LayerTraits {
  bool lowered = true;                // false: accounting only, lowering refuses (not_lowered)
  const char* ramp_family = nullptr;  // drop-path ramp family ("vit"), shared by its kinds
  Ramp ramp = Ramp::none;
  bool cam_source = false;  // its input is the net's CAM feature map (globalAvgPool)
  bool classifier = false;  // a classifier-dropout site (its input is masked), last one wins
  // Token models: the net input is integer ids (first layer), the vocabulary, the context.
  bool (*ids_input)(const Layer&) = nullptr;
  int64_t (*vocab)(const Layer&) = nullptr;
  int64_t (*seq_len)(const Layer&) = nullptr;
  bool (*non_causal)(const Layer&) = nullptr;  // a position may see later ones
  // Detector heads: anchors per cell and classes per anchor (yolo losses), else nullptr.
  std::pair<int64_t, int64_t> (*detector)(const Layer&) = nullptr;
  // Every int field must be >= 1 (checked before the body, in field order) unless listed here
  // with its own lower bound: {{"preDWk", 0}}.
  std::vector<std::pair<std::string_view, int>> field_min{};
};

// The body for a kind (nullptr if unknown) and its traits.
Emitter find_emitter(std::string_view kind);
const LayerTraits& traits(std::string_view kind);
const LayerTraits& traits(const Layer& layer);
// Kinds with IR, in spec order.
std::vector<std::string_view> lowered_kinds();
// Throws `[layer 3 swinStage] layer kind is not lowered yet (lowered: ...)` if any layer of the
// net has no IR. Called when a module is built, before any op is emitted.
void check_lowerable(const NetSpec& net);
// Emits one layer (refuses kinds without IR) and checks the output shape against the
// ParamTable's per-sample shape.
Value* lower_layer(LowerCtx& c, const Layer& layer, Value* x);

// Each src/layers/<kind>.cpp ends with one registration line (no shared table to edit):
//   NETSPEC_REGISTER_LAYER(residualBlock, lower_residual_block)
//   NETSPEC_REGISTER_LAYER(swinStage, account_swin_stage, {.lowered = false})
// The library is linked whole-archive so these static registrars are never dropped.
struct EmitterRegistrar {
  EmitterRegistrar(std::string_view kind, Emitter e, LayerTraits t = {});
};
#define NETSPEC_REGISTER_LAYER(kind, fn, ...)                        \
  static const ::netspec::layers::EmitterRegistrar registrar_##kind{ \
      #kind, fn __VA_OPT__(, ) __VA_ARGS__};

// --- shared helpers ---
// Elementwise activation (activation.cpp).
Value* activation(hlo::Builder& b, Value* x, Activation a);
// softplus(x) = max(x, 0) + log(1 + exp(-|x|)) (no overflow for large |x|) (activation.cpp).
Value* softplus(hlo::Builder& b, Value* x);
// A scalar constant broadcast to x's type.
Value* splat(hlo::Builder& b, double v, Value* like);
// Per-channel vector v [C] broadcast to x's shape along `dim`.
Value* bcast(hlo::Builder& b, Value* v, Value* like, int64_t dim);
// An i32 scalar constant (loop counters, slice starts).
Value* i32(hlo::Builder& b, int64_t v);
// x's block [start, start + size) along `axis` (all of the other dims; start an i32 scalar, clamped
// as dynamic_slice clamps), and x with that block replaced by `blk` (lower.cpp).
Value* block_along(hlo::Builder& b, Value* x, size_t axis, Value* start, int64_t size);
Value* put_block_along(hlo::Builder& b, Value* x, Value* blk, size_t axis, Value* start);
// (low, high) padding of one spatial dim of size h for kernel k, stride s (conv2d.cpp):
// valid -> (0, 0); same -> total = max((ceil(h/s)-1)·s + k - h, 0) split by the PadStyle when
// s > 1 (xlaSame: extra row high; symmetric: (k-1)/2 both sides), xlaSame's split when s == 1.
std::pair<int64_t, int64_t> spatial_padding(int64_t h, int64_t k, int64_t s, Padding pad,
                                            PadStyle style);
// Output size of a conv: `same` keeps ceil(h / s); `valid` gives (h - k_eff) / s + 1 with
// k_eff = d (k - 1) + 1.
int64_t conv_out(int64_t h, int64_t k, int64_t s, Padding p, int64_t d = 1);
// NCHW conv with OIHW weight w (groups from the weight's in-channel dim), padding per dim
// from spatial_padding (conv2d.cpp).
Value* conv(LowerCtx& c, Value* x, Value* w, int64_t stride, Padding pad);
// Declares "<name>.weight" [oc, ic/groups, k, k] (+ "<name>.bias" [oc]) and applies it to x:
// conv (+ bias). Checks groups divide the channels and the map does not vanish.
struct ConvSpec {
  int64_t oc, k, stride = 1, groups = 1;
  bool bias = false;
  Padding pad = Padding::same;
};
Value* conv(LowerCtx& c, const std::string& name, Value* x, const ConvSpec& s);
// BatchNorm (batch_norm.cpp) over all dims but 1 (channels): train uses the batch mean and
// biased variance and reports them to c.batch_stats; eval uses the declared running stats.
Value* batch_norm(LowerCtx& c, Value* x, const Bn& bn);
// Sync-BN (sync_bn.cpp): a per-channel partial sum made global (all_reduce over the replicas when
// c.bn_sync_replicas > 1, else itself), and the element count it then covers (count·replicas).
Value* bn_replica_sum(LowerCtx& c, Value* partial_sum);
int64_t bn_replica_count(const LowerCtx& c, int64_t local_count);
// GroupNorm of x [B, C, H, W] (group_norm.cpp), torch.nn.GroupNorm: `groups` groups of C/groups
// channels, each normalised per sample over its (C/groups)·H·W values (biased variance, eps
// 1e-5), then γ_c·y + β_c. `field` names the groups field in the error when groups ∤ C. The
// declaring form adds "<name>.weight" (ones) / ".bias" (zeros) [C]. No running statistics.
Value* group_norm(LowerCtx& c, Value* x, Value* gamma, Value* beta, int64_t groups,
                  const char* field);
Value* group_norm(LowerCtx& c, const std::string& name, Value* x, int64_t groups,
                  const char* field);
// LayerNorm of x over dim `fd` (biased variance, eps NetSpec::lnEps), γ/β of x's size along fd
// (layer_norm.cpp). The declaring form adds "<name>.weight" / ".bias".
Value* layer_norm(LowerCtx& c, Value* x, Value* gamma, Value* beta, int64_t fd);
Value* layer_norm(LowerCtx& c, const std::string& name, Value* x, int64_t fd);
// y = x·Wᵀ + b over the last dim (nn.Linear): declares "<name>.weight" [out, in] (+ bias)
// (dense.cpp).
Value* linear(LowerCtx& c, const std::string& name, Value* x, int64_t out, bool bias = true);
// The same with weights already declared (a kind whose declaration order differs from its use
// order): x·Wᵀ (+ bias) over the last dim.
Value* linear_apply(hlo::Builder& b, Value* x, Value* w, Value* bias = nullptr);
// conv "<name>.conv" (no bias) + BN "<name>.bn" + activation, the torchvision
// Conv2dNormActivation unit (conv_bn.cpp); `conv` and `bn` name the two parts. With
// c.conv_norm = gn the norm is GroupNorm under the same name (weight/bias, no running stats).
// set_conv_norm: a kind's `norm` / `normGroups` fields (bn or gn; ln refused) into c.conv_norm.
Value* conv_bn_act(LowerCtx& c, const std::string& name, Value* x, const ConvSpec& s, Activation a,
                   const char* conv = "conv", const char* bn = "bn");
void set_conv_norm(LowerCtx& c, Norm n, int64_t groups);
// Nearest 2x upsampling [B, C, H, W] -> [B, C, 2H, 2W] (fpn_detect.cpp).
Value* up2(hlo::Builder& b, Value* x);
// Bilinear x s upsampling, PyTorch align_corners=False (bilinear_upsample.cpp).
Value* bilinear_upsample(hlo::Builder& b, Value* x, int64_t s);
// Mean over H, W: [B, C, H, W] -> [B, C, 1, 1] (global_avg_pool.cpp).
Value* global_avg_pool(hlo::Builder& b, Value* x);
// Residual shortcut (residual_block.cpp): x, or 1x1 conv (stride) + BN "downsample.0/.1" when
// the stride or the width changes.
Value* shortcut(LowerCtx& c, Value* x, int64_t oc, int64_t stride);

}  // namespace netspec::layers
