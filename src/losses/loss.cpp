// Loss dispatch: LossKind -> emitter and label layout.
#include "losses/loss.h"

#include "core/error.h"

namespace netspec::losses {

Value* mean_of_sum(hlo::Builder& b, Value* x, double scale) {
  hlo::I64s dims;
  for (int64_t d = 0; d < x->type.rank(); ++d) dims.push_back(d);
  Value* s = b.reduce(x, b.scalar(0, x->type.dtype()), dims, hlo::OpKind::kAdd);
  return b.multiply(s, b.scalar(scale, x->type.dtype()));
}

bool is_lowered(LossKind k) {
  return k == LossKind::classCE || k == LossKind::focal || k == LossKind::softLabelCE ||
         k == LossKind::bce || k == LossKind::floatTargetMse || k == LossKind::tokenCE ||
         k == LossKind::yoloAnchor || k == LossKind::yolov1Masked || k == LossKind::detrSet ||
         is_per_pixel(k);
}

hlo::Type label_type(const LossOptions& o, const hlo::Type& logits) {
  if (logits.rank() < 2 && o.kind != LossKind::floatTargetMse)
    fail("loss", "{} expects logits [B, N] (got {})", enum_name(o.kind), logits.str());
  if (is_per_pixel(o.kind)) {
    if (logits.rank() != 4)
      fail("loss", "{} expects per-pixel logits [B, NC, H, W] (got {})", enum_name(o.kind),
           logits.str());
    return hlo::Type::tensor(DType::kI32, {logits.dim(0), logits.dim(2), logits.dim(3)});
  }
  switch (o.kind) {
    case LossKind::classCE:
    case LossKind::focal:
      return hlo::Type::tensor(DType::kI32, {logits.dim(0)});
    case LossKind::softLabelCE:
    case LossKind::bce:
    case LossKind::floatTargetMse:
      return logits;
    case LossKind::tokenCE:
      if (logits.rank() != 3)
        fail("loss", "tokenCE expects per-token logits [B, T, V] (got {})", logits.str());
      return hlo::Type::tensor(DType::kI32, {logits.dim(0), logits.dim(1)});
    case LossKind::yoloAnchor:  // (objMask, x, y, log w/aw, log h/ah, class) per anchor row
      if (logits.rank() != 3 || logits.dim(2) < 5)
        fail("loss", "yoloAnchor expects detector rows [B, N, 5 + classes] (got {})", logits.str());
      yolo_rows(o, logits.dim(1));  // refuses anchors / fpnScales that do not fit the head
      return hlo::Type::tensor(logits.dtype(), {logits.dim(0), logits.dim(1), 6});
    case LossKind::yolov1Masked:  // target channels + cell mask
      return yolov1_label_type(logits);
    case LossKind::detrSet:  // (class, cx, cy, w, h) per query, from the host's matching
      if (logits.rank() != 3 || logits.dim(2) < 6)
        fail("loss", "detrSet expects detrHeads rows [B, Q, classes + 5] (got {})", logits.str());
      return hlo::Type::tensor(logits.dtype(), {logits.dim(0), logits.dim(1), 5});
    default:
      fail("loss",
           "{} is not lowered yet (lowered: classCE, focal, softLabelCE, bce, floatTargetMse, "
           "tokenCE, yoloAnchor, yolov1Masked, detrSet, perPixel*)",
           enum_name(o.kind));
  }
}

Value* emit_loss(hlo::Builder& b, const LossOptions& o, Value* logits, Value* labels) {
  if (labels->type != label_type(o, logits->type))
    fail("loss", "{} labels (got {}, expected {})", enum_name(o.kind), labels->type.str(),
         label_type(o, logits->type).str());
  if (is_per_pixel(o.kind)) return per_pixel_loss(b, o, logits, labels);
  switch (o.kind) {
    case LossKind::classCE:
    case LossKind::focal:
      return class_ce(b, logits, labels, o.label_smoothing, o.focal_gamma);
    case LossKind::softLabelCE:
      return soft_label_ce(b, logits, labels);
    case LossKind::bce:
      return bce_with_logits(b, logits, labels);
    case LossKind::floatTargetMse:
      return mse(b, logits, labels);
    case LossKind::tokenCE:
      return token_ce(b, logits, labels);
    case LossKind::yoloAnchor:
      return yolo_loss(b, o, logits, labels);
    case LossKind::yolov1Masked:
      return yolov1_loss(b, o, logits, labels);
    case LossKind::detrSet:
      return detr_set_loss(b, logits, labels);
    default:
      fail("loss", "{} is not lowered yet", enum_name(o.kind));
  }
}

}  // namespace netspec::losses
