// Module assemblers: turn a NetSpec into StableHLO modules (forward, eval, cam, grad_cam,
// train_step, vjp, optimizer, and the bare loss used by gradient checks), each with its manifest.
// Forward, eval, cam and the train step come from ONE traversal (emit_forward_graph) with a
// train/eval switch. Layers without an emitter and unlowered losses/optimizers are refused before
// any op is built.
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
  X(forward) X(eval) X(cam) X(grad_cam) X(train_step) X(vjp) X(optimizer) X(loss)
NETSPEC_ENUM(ModuleKind, NETSPEC_MODULE_KINDS)
}  // namespace netspec

namespace netspec::emit {

// bf16 mixed precision (TrainConfig bf16 / bf16Conv; emit/precision.cpp). bf16: every
// dot_general of the net and its patchify convolutions (stride = kernel, no padding: a matmul
// over patches) take bf16 operands (converts inserted before them) and keep an f32 result;
// bf16_conv: also every other convolution but the depthwise ones. Weights stay f32.
struct Precision {
  bool bf16 = false, bf16_conv = false;
};

struct EmitOptions {
  int64_t batch = 1;
  DType dtype = DType::kF32;
  losses::LossOptions loss;
  optim::OptimConfig optim;
  // Train step and loss only: stochastic-depth rate (max of the ramp) and classifier dropout.
  // > 0 adds keep-mask inputs (role "mask", drop_path.cpp); eval / cam never take them.
  double drop_path = 0, dropout = 0;
  // forward / vjp (gradient accumulation, train/stepper.cpp): take the same keep masks right
  // after x (train_masks' order), so each micro-batch shard drops what the host drew for it.
  // Off (the default): they take none and apply no dropout.
  bool masked_forward = false;
  // Data parallel (docs/distributed.md): the module is one of `replicas` copies, each given a
  // batch shard of `batch` samples; > 1 averages the gradients and the loss with all_reduce
  // before the optimizer. sync_bn: BN statistics over all replicas' shards (the global batch).
  int replicas = 1;
  bool sync_bn = false;
  Precision precision;
  // Takes loss, label smoothing, focal gamma and the optimizer fields from a TrainConfig.
  static EmitOptions from_train(const TrainConfig& t, int64_t batch);
};

struct Emitted {
  std::unique_ptr<hlo::Module> module;
  Manifest manifest;
};

// Builds the module `kind` for `net` (entry @main). Throws netspec::Error naming the first layer
// that is not lowered, or the unlowered loss / optimizer.
// The table is build_param_table(net), built once per net by the caller and passed down; the
// overload without it builds it.
Emitted emit_module(const NetSpec& net, const ParamTable& table, ModuleKind kind,
                    const EmitOptions& o);
Emitted emit_module(const NetSpec& net, ModuleKind kind, const EmitOptions& o);

struct ForwardOut {
  hlo::Value* logits = nullptr;
  hlo::Value* cam_features = nullptr;        // input of the last globalAvgPool (nullptr if none)
  std::vector<layers::BnStats> batch_stats;  // train: one per BnDesc, in order
  std::vector<size_t> layer_begin;  // ops in the builder's block before layer i (layer bounds)
};
// The one traversal: emits every layer at b's position. `running` (eval only) holds one entry
// per BnDesc of the table. Train only: `drop` gives the drop-path blocks their masks (or records
// them), `dropout_mask` multiplies the input of the classifier (the last dense layer).
// sync_bn_replicas > 1 (train): BN statistics are all_reduce'd over that many replicas.
// cam_delta (grad_cam): added to the input of layer grad_cam_layer(table) (the Grad-CAM feature
// map), so the gradient w.r.t. this zero input is the gradient w.r.t. the features.
// The layer whose input is the Grad-CAM feature map: the last globalAvgPool; without one, the
// layer after the last convolution (a layer with an OIHW kernel and a [C, H, W] output) that is
// not the net's last layer (a segmentation net's 1x1 head explains nothing), the target layer
// pytorch-grad-cam takes for CNNs. table.layers.size() when the net has neither.
size_t grad_cam_layer(const ParamTable& table);
ForwardOut emit_forward_graph(hlo::Builder& b, const NetSpec& net, const ParamTable& table,
                              const std::vector<hlo::Value*>& params, hlo::Value* x, bool train,
                              const std::vector<layers::BnStats>& running = {},
                              layers::DropPath* drop = nullptr, hlo::Value* dropout_mask = nullptr,
                              int64_t sync_bn_replicas = 1, hlo::Value* cam_delta = nullptr,
                              Precision precision = {});
// Gives the dot_general / convolution ops of `block` from op `begin` on (regions included) the
// bf16 operands `p` asks for: convert(f32 -> bf16) of each operand right before the op, whose
// result stays f32 (f32 accumulation). One convert per use, so each bf16 value has one user.
void cast_contractions(hlo::Block& block, size_t begin, const Precision& p);

// The keep-mask inputs of the train step / loss for o.drop_path and o.dropout (empty when both
// are 0): one [B] per residual drop-path branch in emission order, each with its rate p_i, then
// "dropout" shaped like the classifier input [B, F]. Mask values are 0 or 1/(1-p) (drop_path.cpp).
std::vector<TensorInfo> train_masks(const NetSpec& net, const ParamTable& t, const EmitOptions& o);
// Hands f's mask arguments f->arg(first + k) (k over `masks`, train_masks' order) to the forward
// traversal: the drop-path ones into drop.masks, "dropout" into *dropout.
void bind_masks(const hlo::Func* f, size_t first, const std::vector<TensorInfo>& masks,
                layers::DropPath& drop, hlo::Value*& dropout);
// Per-block drop-path rates for the recorded blocks (one per entry of `blocks`), p = the max rate.
// convNextStage (torchvision ConvNeXt): p·i/(N-1); mbConv / fusedMbConv (torchvision
// EfficientNet): p·i/N; transformerEncoder (timm ViT, linspace(0, p, N)): p·i/(N-1); i is the
// block's ordinal among the N blocks of its family over the whole net (branches share it).
std::vector<double> drop_path_rates(const std::vector<layers::DropPathBlock>& blocks, double p);
// Index of the layer classifier dropout precedes: the last dense layer (fails when none).
size_t classifier_layer(const NetSpec& net);

}  // namespace netspec::emit
