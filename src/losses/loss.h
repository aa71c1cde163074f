// In-graph training losses: logits [B, N] (+ labels) -> scalar mean loss, one file per family.
// Label layout per loss (label_type): classCE / focal use class indices i32 [B]; the perPixel*
// losses logits [B, NC, H, W] with class maps i32 [B, H, W] (per_pixel.cpp); softLabelCE and
// bce take f32 [B, N] targets (probabilities / multi-hot); floatTargetMse takes targets shaped
// like the logits; tokenCE takes logits [B, T, V] and token labels i32 [B, T] (kIgnoreIndex skips);
// yoloAnchor takes an fpnDetect head's rows [B, N, 5 + K] and f32 labels [B, N, 6] (yolo.cpp);
// yolov1Masked a grid [B, 5 + K, gH, gW] and labels [B, 6 + K, gH, gW] (yolov1.cpp);
// detrSet takes detrHeads rows [B, Q, K + 5] and matched per-query targets [B, Q, 5] (detr.cpp).
// af2Fold takes a structureModule's frames (+ distogram) [B, L, 12 + L·K] and true frames with a
// residue mask [B, L, 13] (fold.cpp). Softmax and logsumexp subtract the max. Unlowered kinds are
// refused by name.
#pragma once
#include <vector>

#include "hlo/builder.h"
#include "spec/enums.h"

namespace netspec {
struct NetSpec;
struct TrainConfig;
}  // namespace netspec

namespace netspec::losses {

using hlo::Value;

// tokenCE labels equal to this are ignored (PyTorch's CrossEntropyLoss ignore_index default).
constexpr int32_t kIgnoreIndex = -100;

struct LossOptions {
  LossKind kind = LossKind::classCE;
  double label_smoothing = 0;  // classCE: q = (1-ε)·onehot + ε/N
  double focal_gamma = 0;      // classCE with γ > 0 is the focal loss -(1-p_t)^γ·log p_t
  std::vector<double> class_weights{};  // perPixelWeightedCE: one weight per class
  // yoloAnchor (TrainConfig anchors, fpnScales, useDiouBox, yoloClsWeights, yoloClsFocalGamma).
  std::vector<double> anchors{};      // w,h pairs in pixels: A shared by every level, or 3·A
  std::vector<double> fpn_scales{};   // level strides in pixels, finest first: [s, 2s, 4s]
  bool diou_box = false;              // 1 - DIoU box loss (else MSE on σ(tx), σ(ty), tw, th)
  std::vector<double> cls_weights{};  // per-class weights of the class CE (empty: 1)
  double cls_focal_gamma = 0;         // focal exponent of the class CE (0: plain CE)
  double obj_focal_gamma = 0;         // focal exponent of the objectness BCE (0: plain BCE)
  // yolov1Masked (the seed's YOLOv1 grid loss, yolov1.cpp): λ_coord, λ_noobj, √ floor ε.
  double lambda_coord = 5, lambda_noobj = 0.5, sqrt_eps = 1e-6;
  int64_t det_anchors = 0;  // anchors per cell of the head (0: one per anchor pair)
  // nerfRenderMse (nerf_render.cpp): points per ray, the sampled ray interval, background grey.
  int64_t nerf_samples = 64;
  double nerf_near = 2, nerf_far = 6, nerf_background = 1;
  // The loss fields of a TrainConfig (focalGamma only for the focal losses: its default, 2,
  // must not turn classCE focal).
  static LossOptions from_train(const TrainConfig& t);
};

// The anchor rows of a yoloAnchor head with N rows: anchors per cell, rows per level (finest
// first) and each row's anchor size in grid units (pixels / the level's stride). Fails naming
// anchors / fpnScales when they do not fit 3 levels of A anchors per cell.
struct YoloRows {
  int64_t anchors = 0;
  std::vector<int64_t> level_rows;
  std::vector<double> anchor_w, anchor_h;  // [N]
};
YoloRows yolo_rows(const LossOptions& o, int64_t n);
// o with det_anchors taken from the net's fpnDetect head (yoloAnchor; other kinds: o as is), and
// fpnScales' coarsest stride checked against the net's detStride. Without it the anchor list is
// read as shared by every level (A = its pair count).
LossOptions for_net(const LossOptions& o, const NetSpec& net);

// What a loss compares the net's output with: class indices i32 [B]; class maps i32 [B, H, W];
// targets shaped like the output (probabilities, multi-hot, regression values); token ids
// i32 [B, T]; detector targets assigned on the host from boxes;
// ray colours f32 [R, 3] for rows of R rays x nerfSamples points (nerfRenderMse);
// backbone frames (af2Fold: the true frames and a residue mask per residue).
enum class TargetKind {
  classIndex,
  perPixelClass,
  likeOutput,
  tokenIds,
  detectorRows,
  rayColors,
  backboneFrames
};

// One row of the loss table (loss.cpp): a loss kind is lowered when it has one. Adding a loss is
// its family file plus one row.
struct LossTraits {
  LossKind kind;
  TargetKind target;
  bool soft = false;   // its class targets are distributions (mixup / cutmix feed them)
  bool focal = false;  // reads focalGamma: (1 - p)^γ weights its log-probabilities
  // The labels' type for logits of type `logits` (checked: logits of rank >= 2).
  hlo::Type (*label_type)(const LossOptions& o, const hlo::Type& logits);
  // Scalar loss (mean over the batch; bce and mse: mean over every element).
  Value* (*emit)(hlo::Builder& b, const LossOptions& o, Value* logits, Value* labels);
};
// The row of k; throws naming the lowered kinds when it has none.
const LossTraits& loss_traits(LossKind k);

bool is_lowered(LossKind k);
// The labels' type for logits of type `logits` ([B, N]); throws for unlowered kinds.
hlo::Type label_type(const LossOptions& o, const hlo::Type& logits);
// Scalar loss (mean over the batch; bce and mse: mean over every element).
Value* emit_loss(hlo::Builder& b, const LossOptions& o, Value* logits, Value* labels);

// The running-accuracy count of the train step (correct_count.cpp): the losses with hard class
// targets (classIndex, perPixelClass) count Σ [argmax z = y] over the samples / pixels as an i32
// scalar; soft targets (mixup / cutmix: timm shows no train accuracy there), regression, tokens
// and detectors have none (nullptr).
bool counts_correct(LossKind k);
Value* correct_count(hlo::Builder& b, const LossOptions& o, Value* logits, Value* labels);

// log softmax over the last dim (or `dim`): z - max - log Σ exp(z - max).
Value* log_softmax(hlo::Builder& b, Value* z);
Value* log_softmax(hlo::Builder& b, Value* z, int64_t dim);
// Per-pixel segmentation losses (per_pixel.cpp): logits [B, NC, H, W], labels i32 [B, H, W].
bool is_per_pixel(LossKind k);
Value* per_pixel_loss(hlo::Builder& b, const LossOptions& o, Value* logits, Value* labels);
Value* class_ce(hlo::Builder& b, Value* logits, Value* labels, double smoothing, double gamma);
// Per-token CE: -Σ_{b,t: y≠ignore} log softmax(z[b,t])[y] / #{y ≠ ignore} (0 if all ignored).
Value* token_ce(hlo::Builder& b, Value* logits, Value* labels);
Value* soft_label_ce(hlo::Builder& b, Value* logits, Value* targets);
Value* bce_with_logits(hlo::Builder& b, Value* logits, Value* targets);
// Elementwise binary CE on logits z against targets y: max(z, 0) - z·y + log(1 + exp(-|z|)).
Value* bce_terms(hlo::Builder& b, Value* z, Value* y);
// Focal BCE (Lin et al.) with its true gradient: bce·(y·(1-σ(z))^γ + (1-y)·σ(z)^γ); γ = 0: bce.
Value* focal_bce_terms(hlo::Builder& b, Value* z, Value* y, double gamma);
// Elementwise w·(1 - p)^γ·log p from log-probabilities lsm (γ = 0: w·log p); the weighted,
// optionally focal, cross-entropy terms before the sum and the minus sign.
Value* focal_log_probs(hlo::Builder& b, Value* w, Value* lsm, double gamma);
Value* mse(hlo::Builder& b, Value* pred, Value* targets);
// yoloAnchor detection loss of predictions [B, N, 5 + K] against labels [B, N, 6] (yolo.cpp).
Value* yolo_loss(hlo::Builder& b, const LossOptions& o, Value* pred, Value* labels);
// yolov1Masked, the seed's YOLOv1 grid loss (yolov1.cpp): predictions [B, 5 + K, gH, gW],
// labels [B, 6 + K, gH, gW] (the target channels, then the cell mask).
hlo::Type yolov1_label_type(const hlo::Type& pred);
Value* yolov1_loss(hlo::Builder& b, const LossOptions& o, Value* pred, Value* labels);
// mask·(1 - DIoU) per cell [B, gH, gW] of the YOLOv1 DIoU box term: pred, tgt [B, >= 4, gH, gW]
// (raw x, y, w, h against cell offsets and relative sizes), mask [B, gH, gW].
Value* yolov1_diou_cells(hlo::Builder& b, Value* pred, Value* tgt, Value* mask);
// 1 - IoU + ρ²/c² of boxes given by centre and size (all the same shape), eps 1e-7 as ultralytics.
Value* diou_loss(hlo::Builder& b, Value* px, Value* py, Value* pw, Value* ph, Value* tx, Value* ty,
                 Value* tw, Value* th);
// DETR's set loss of detrHeads rows [B, Q, K + 5] against matched targets [B, Q, 5] (detr.cpp).
Value* detr_set_loss(hlo::Builder& b, Value* pred, Value* labels);
// nerfRenderMse (nerf_render.cpp): raw nerfMLP rows [R·S, 4] (ray-major, S = o.nerf_samples)
// volume-rendered to colours [R, 3]; nerf_rays checks the rows and returns R.
int64_t nerf_rays(const LossOptions& o, const hlo::Type& raw);
Value* nerf_render(hlo::Builder& b, const LossOptions& o, Value* raw);
Value* nerf_render_mse(hlo::Builder& b, const LossOptions& o, Value* raw, Value* colors);
// Net rows one sample of t's data becomes: nerfSamples for nerfRenderMse (a ray), else 1. The
// modules of a batch of B samples take B x this rows (train, eval, emit, bench).
int64_t rows_per_sample(const TrainConfig& t);
// AlphaFold 2's FAPE + distogram loss (fold.cpp): predictions [B, L, 12 + L·K] (frames, then
// distogram logits), labels [B, L, 13] (true R row-major, t in Å, residue mask).
hlo::Type fold_label_type(const hlo::Type& pred);
Value* fold_loss(hlo::Builder& b, Value* pred, Value* labels);
// scale · Σ x over every element (a scalar).
Value* mean_of_sum(hlo::Builder& b, Value* x, double scale);

}  // namespace netspec::losses
