// The seg-loss probe (see probes.h): main(logits [B, NC, H, W], labels i32 [B, H, W]) ->
// (loss, d_logits), the loss block alone with its VJP seeded by 1, for finite-difference checks.
#include <fmt/format.h>

#include "autodiff/vjp.h"
#include "core/error.h"
#include "emit/probes.h"
#include "hlo/passes.h"

namespace netspec::emit {

Emitted emit_seg_loss_probe(const SegLossProbe& p) {
  if (!losses::is_per_pixel(p.loss.kind))
    fail("probe-seg-loss",
         "--loss must be a per-pixel loss (got {}, expected perPixelCE, "
         "perPixelDice, perPixelDiceCE, perPixelWeightedCE or perPixelFocalCE)",
         enum_name(p.loss.kind));
  if (p.batch < 1 || p.classes < 2 || p.height < 1 || p.width < 1)
    fail("probe-seg-loss", "sizes (got batch {}, classes {}, {}x{}, expected >= 1, >= 2, >= 1)",
         p.batch, p.classes, p.height, p.width);
  if (p.dtype != DType::kF32 && p.dtype != DType::kF64)
    fail("probe-seg-loss", "dtype must be f32 or f64 (got {})", dtype_name(p.dtype));
  const hlo::Type lt = hlo::Type::tensor(p.dtype, {p.batch, p.classes, p.height, p.width});
  const hlo::Type yt = losses::label_type(p.loss, lt);
  Emitted e;
  e.module = std::make_unique<hlo::Module>();
  hlo::Module& m = *e.module;
  hlo::Func* lf = m.add_func("seg_loss", {lt, yt}, false);
  {
    hlo::Builder b(lf->body.get());
    b.func_return({losses::emit_loss(b, p.loss, lf->arg(0), lf->arg(1))});
  }
  autodiff::VjpOptions vo;
  vo.name = "seg_loss_vjp";
  hlo::Func* g = autodiff::vjp(*lf, {0}, vo);
  hlo::Func* f = m.add_func("main", {lt, yt});
  hlo::Builder b(f->body.get());
  std::vector<hlo::Value*> r =
      hlo::inline_call(f->body.get(), *g, {f->arg(0), f->arg(1), b.scalar(1, p.dtype)});
  b.func_return(r);
  std::erase_if(m.funcs, [&](const auto& q) { return q.get() == g || q.get() == lf; });
  hlo::run_cleanup(*f);

  Manifest& man = e.manifest;
  man.module = "probe-seg-loss";
  man.net = std::string(enum_name(p.loss.kind));
  man.batch = p.batch;
  man.inputs = {{"logits", lt.shape(), p.dtype, "input", 0},
                {"labels", yt.shape(), DType::kI32, "label", 0}};
  man.outputs = {{"loss", {}, p.dtype, "loss", 0},
                 {"d_logits", lt.shape(), p.dtype, "gradient", 0}};
  return e;
}

}  // namespace netspec::emit
