// The grad_cam module: (params, running stats, x, class K) -> (logits, features, d.features) with
// d.features[n] = ∂ logits[n, K[n]] / ∂ features[n], the vjp of the eval forward with the
// one-hot cotangent e_K. A per-pixel net (logits [B, C, H, W], segmentation) takes one more input,
// mask [B, H, W], and explains Σ_p mask[n, p] · logits[n, K[n], p] (pytorch-grad-cam's
// SemanticSegmentationTarget: the mask is the pixels predicted as K). The gradient w.r.t. the
// features (an intermediate value) is taken as the gradient w.r.t. a zero input added to them
// (emit_forward_graph's cam_delta). The features are the last globalAvgPool's input, else the last
// convolution's output (grad_cam_layer).
#include <fmt/format.h>

#include "autodiff/vjp.h"
#include "core/error.h"
#include "emit/emit.h"
#include "emit/signature.h"
#include "hlo/passes.h"
#include "layers/lower.h"

namespace netspec::emit {

Emitted emit_grad_cam(const NetSpec& net, const ParamTable& t, const EmitOptions& o) {
  const size_t cam = grad_cam_layer(t);
  if (cam == t.layers.size())
    fail("emit grad_cam",
         "net {} has no globalAvgPool layer and no convolution before its last layer (grad_cam "
         "needs a feature map)",
         net.name);
  const bool per_pixel = t.output.size() == 3;
  if (t.output.size() != 1 && !per_pixel)
    fail("emit grad_cam",
         "net {} must output class logits [B, C] or per-pixel logits [B, C, H, W] (got per-sample "
         "{})",
         net.name, shape_str(t.output));
  const size_t np = t.params.size(), nr = 2 * t.bns.size();
  const hlo::Type ft = hlo::Type::tensor(o.dtype, with_batch(o.batch, t.layers[cam].in));
  const hlo::Type lt = hlo::Type::tensor(o.dtype, with_batch(o.batch, t.output));
  Emitted e;
  e.module = std::make_unique<hlo::Module>();
  hlo::Module& m = *e.module;
  m.name = fmt::format("{}_grad_cam", sanitize(net.name));

  Signature in, out;
  add_params(in, t, o.dtype, "param");
  add_running(in, t, o.dtype);
  in.add("x", input_type(net, t, o), "input");
  // fwd(params, running, x, delta) -> (logits, features): the eval forward, delta at the features.
  std::vector<hlo::Type> ftypes = in.types;
  ftypes.push_back(ft);
  hlo::Func* fwd = m.add_func("cam_fwd", ftypes, false);
  {
    hlo::Builder fb(fwd->body.get());
    std::vector<layers::BnStats> running;
    for (size_t k = 0; k < t.bns.size(); ++k)
      running.push_back({fwd->arg(np + 2 * k), fwd->arg(np + 2 * k + 1)});
    ForwardOut fo =
        emit_forward_graph(fb, net, t, args_of(fwd, 0, np), fwd->arg(np + nr), false, running,
                           nullptr, nullptr, 1, fwd->arg(np + nr + 1), o.precision);
    fb.func_return({fo.logits, fo.cam_features});
  }
  autodiff::VjpOptions vo;
  vo.name = "cam_fwd_vjp";
  hlo::Func* g = autodiff::vjp(*fwd, {np + nr + 1}, vo);

  in.add("class", hlo::Type::tensor(DType::kI32, {o.batch}), "label");
  const Shape ls = lt.shape();
  if (per_pixel) in.add("mask", hlo::Type::tensor(o.dtype, {o.batch, ls[2], ls[3]}), "label");
  hlo::Func* f = m.add_func("main", in.types);
  hlo::Builder b(f->body.get());
  std::vector<hlo::Value*> args = args_of(f, 0, np + nr + 1);
  args.push_back(b.constant_splat(0.0, ft));  // delta = 0: the features are unchanged
  // Cotangents: e_K for the logits (iota over classes == K, broadcast over the batch row; per
  // pixel: times the mask), 0 for the features.
  hlo::Value* k = b.broadcast_in_dim(f->arg(np + nr + 1), ls, {0});
  hlo::Value* cls = b.iota(hlo::Type::tensor(DType::kI32, ls), 1);
  hlo::Value* on = per_pixel ? b.broadcast_in_dim(f->arg(np + nr + 2), ls, {0, 2, 3})
                             : b.constant_splat(1.0, lt);
  args.push_back(b.select(b.compare(cls, k, "EQ"), on, b.constant_splat(0.0, lt)));
  args.push_back(b.constant_splat(0.0, ft));
  std::vector<hlo::Value*> r = hlo::inline_call(f->body.get(), *g, args);
  out.add_value("logits", r[0], "output");
  out.add_value("features", r[1], "output");
  out.add_value("d.features", r[2], "gradient");
  return_and_clean(b, m, *f, out, {g, fwd});
  e.manifest = make_manifest(net, ModuleKind::grad_cam, o, in, out);
  return e;
}

}  // namespace netspec::emit
