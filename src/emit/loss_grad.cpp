// See loss_grad.h: the loss as a function of the logits, its VJP inlined with cotangent w.
#include "emit/loss_grad.h"

#include "autodiff/vjp.h"
#include "hlo/passes.h"
#include "losses/loss.h"

namespace netspec::emit {

std::unique_ptr<hlo::Module> emit_loss_grad(const NetSpec& net, const hlo::Type& logits,
                                            const EmitOptions& o) {
  const losses::LossOptions lo = losses::for_net(o.loss, net);
  auto m = std::make_unique<hlo::Module>();
  m->name = sanitize(net.name) + "_loss_grad";
  const hlo::Type labels = losses::label_type(lo, logits);
  hlo::Func* lf = m->add_func("loss_fn", {logits, labels}, false);
  {
    hlo::Builder b(lf->body.get());
    b.func_return({losses::emit_loss(b, lo, lf->arg(0), lf->arg(1))});
  }
  autodiff::VjpOptions vo;
  vo.name = "loss_fn_vjp";
  hlo::Func* g = autodiff::vjp(*lf, {0}, vo);
  const hlo::Type w = hlo::Type::tensor(logits.dtype(), {});
  hlo::Func* f = m->add_func("main", {logits, labels, w});
  hlo::Builder b(f->body.get());
  std::vector<hlo::Value*> r =
      hlo::inline_call(f->body.get(), *g, {f->arg(0), f->arg(1), f->arg(2)});
  b.func_return({r.at(0), r.at(1)});
  std::erase_if(m->funcs,
                [&](const std::unique_ptr<hlo::Func>& p) { return p.get() == g || p.get() == lf; });
  hlo::run_cleanup(*f);
  return m;
}

}  // namespace netspec::emit
