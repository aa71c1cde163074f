// Loss dispatch: LossKind -> emitter and label layout.
#include "losses/loss.h"

#include "core/error.h"
#include "spec/train_config.h"

namespace netspec::losses {

Value* mean_of_sum(hlo::Builder& b, Value* x, double scale) {
  hlo::I64s dims;
  for (int64_t d = 0; d < x->type.rank(); ++d) dims.push_back(d);
  Value* s = b.reduce(x, b.scalar(0, x->type.dtype()), dims, hlo::OpKind::kAdd);
  return b.multiply(s, b.scalar(scale, x->type.dtype()));
}

namespace {

hlo::Type class_index_labels(const LossOptions&, const hlo::Type& logits) {
  return hlo::Type::tensor(DType::kI32, {logits.dim(0)});
}

hlo::Type per_pixel_labels(const LossOptions& o, const hlo::Type& logits) {
  if (logits.rank() != 4)
    fail("loss", "{} expects per-pixel logits [B, NC, H, W] (got {})", enum_name(o.kind),
         logits.str());
  return hlo::Type::tensor(DType::kI32, {logits.dim(0), logits.dim(2), logits.dim(3)});
}

hlo::Type like_output(const LossOptions&, const hlo::Type& logits) { return logits; }

hlo::Type token_labels(const LossOptions&, const hlo::Type& logits) {
  if (logits.rank() != 3)
    fail("loss", "tokenCE expects per-token logits [B, T, V] (got {})", logits.str());
  return hlo::Type::tensor(DType::kI32, {logits.dim(0), logits.dim(1)});
}

// (objMask, x, y, log w/aw, log h/ah, class) per anchor row.
hlo::Type yolo_labels(const LossOptions& o, const hlo::Type& logits) {
  if (logits.rank() != 3 || logits.dim(2) < 5)
    fail("loss", "yoloAnchor expects detector rows [B, N, 5 + classes] (got {})", logits.str());
  yolo_rows(o, logits.dim(1));  // refuses anchors / fpnScales that do not fit the head
  return hlo::Type::tensor(logits.dtype(), {logits.dim(0), logits.dim(1), 6});
}

hlo::Type yolov1_labels(const LossOptions&, const hlo::Type& logits) {
  return yolov1_label_type(logits);  // target channels + cell mask
}

// (class, cx, cy, w, h) per query, from the host's matching.
hlo::Type detr_labels(const LossOptions&, const hlo::Type& logits) {
  if (logits.rank() != 3 || logits.dim(2) < 6)
    fail("loss", "detrSet expects detrHeads rows [B, Q, classes + 5] (got {})", logits.str());
  return hlo::Type::tensor(logits.dtype(), {logits.dim(0), logits.dim(1), 5});
}

hlo::Type ray_colors(const LossOptions& o, const hlo::Type& raw) {
  return hlo::Type::tensor(raw.dtype(), {nerf_rays(o, raw), 3});
}

Value* emit_class_ce(hlo::Builder& b, const LossOptions& o, Value* z, Value* y) {
  return class_ce(b, z, y, o.label_smoothing, o.focal_gamma);
}
Value* emit_soft_ce(hlo::Builder& b, const LossOptions&, Value* z, Value* y) {
  return soft_label_ce(b, z, y);
}
Value* emit_bce(hlo::Builder& b, const LossOptions&, Value* z, Value* y) {
  return bce_with_logits(b, z, y);
}
Value* emit_mse(hlo::Builder& b, const LossOptions&, Value* z, Value* y) { return mse(b, z, y); }
Value* emit_token_ce(hlo::Builder& b, const LossOptions&, Value* z, Value* y) {
  return token_ce(b, z, y);
}
hlo::Type fold_labels(const LossOptions&, const hlo::Type& logits) {
  return fold_label_type(logits);
}
Value* emit_fold(hlo::Builder& b, const LossOptions&, Value* z, Value* y) {
  return fold_loss(b, z, y);
}
Value* emit_detr(hlo::Builder& b, const LossOptions&, Value* z, Value* y) {
  return detr_set_loss(b, z, y);
}

using T = TargetKind;
// The loss table: every lowered kind, its targets and its two functions.
const LossTraits kLosses[] = {
    {LossKind::classCE, T::classIndex, false, false, class_index_labels, emit_class_ce},
    {LossKind::focal, T::classIndex, false, true, class_index_labels, emit_class_ce},
    {LossKind::softLabelCE, T::likeOutput, true, false, like_output, emit_soft_ce},
    {LossKind::bce, T::likeOutput, true, false, like_output, emit_bce},
    {LossKind::floatTargetMse, T::likeOutput, false, false, like_output, emit_mse},
    {LossKind::perPixelCE, T::perPixelClass, false, false, per_pixel_labels, per_pixel_loss},
    {LossKind::perPixelDice, T::perPixelClass, false, false, per_pixel_labels, per_pixel_loss},
    {LossKind::perPixelDiceCE, T::perPixelClass, false, false, per_pixel_labels, per_pixel_loss},
    {LossKind::perPixelWeightedCE, T::perPixelClass, false, false, per_pixel_labels,
     per_pixel_loss},
    {LossKind::perPixelFocalCE, T::perPixelClass, false, true, per_pixel_labels, per_pixel_loss},
    {LossKind::tokenCE, T::tokenIds, false, false, token_labels, emit_token_ce},
    {LossKind::yoloAnchor, T::detectorRows, false, false, yolo_labels, yolo_loss},
    {LossKind::yolov1Masked, T::detectorRows, false, false, yolov1_labels, yolov1_loss},
    {LossKind::detrSet, T::detectorRows, false, false, detr_labels, emit_detr},
    {LossKind::nerfRenderMse, T::rayColors, false, false, ray_colors, nerf_render_mse},
    {LossKind::af2Fold, T::backboneFrames, false, false, fold_labels, emit_fold},
};

const LossTraits* find_loss(LossKind k) {
  for (const LossTraits& t : kLosses)
    if (t.kind == k) return &t;
  return nullptr;
}

}  // namespace

LossOptions LossOptions::from_train(const TrainConfig& t) {
  LossOptions o;
  o.kind = t.lossKind;
  o.label_smoothing = t.labelSmoothing;
  o.focal_gamma = is_lowered(t.lossKind) && loss_traits(t.lossKind).focal ? t.focalGamma : 0.0;
  o.class_weights = t.lossWeights;
  o.anchors = t.anchors;
  o.fpn_scales = t.fpnScales;
  o.diou_box = t.useDiouBox;
  o.cls_weights = t.yoloClsWeights;
  o.cls_focal_gamma = t.yoloClsFocalGamma;
  o.obj_focal_gamma = t.yoloObjFocalGamma;
  o.nerf_samples = t.nerfSamples;
  o.nerf_near = t.nerfNear;
  o.nerf_far = t.nerfFar;
  o.nerf_background = t.nerfBackground;
  return o;
}

int64_t rows_per_sample(const TrainConfig& t) {
  return t.lossKind == LossKind::nerfRenderMse ? t.nerfSamples : 1;
}

const LossTraits& loss_traits(LossKind k) {
  if (const LossTraits* t = find_loss(k)) return *t;
  std::string names;
  for (const LossTraits& t : kLosses)
    names += (names.empty() ? "" : ", ") + std::string(enum_name(t.kind));
  fail("loss", "{} is not lowered yet (lowered: {})", enum_name(k), names);
}

bool is_lowered(LossKind k) { return find_loss(k) != nullptr; }

hlo::Type label_type(const LossOptions& o, const hlo::Type& logits) {
  const LossTraits& t = loss_traits(o.kind);
  if (logits.rank() < 2 && o.kind != LossKind::floatTargetMse)
    fail("loss", "{} expects logits [B, N] (got {})", enum_name(o.kind), logits.str());
  return t.label_type(o, logits);
}

Value* emit_loss(hlo::Builder& b, const LossOptions& o, Value* logits, Value* labels) {
  if (labels->type != label_type(o, logits->type))
    fail("loss", "{} labels (got {}, expected {})", enum_name(o.kind), labels->type.str(),
         label_type(o, logits->type).str());
  return loss_traits(o.kind).emit(b, o, logits, labels);
}

}  // namespace netspec::losses
