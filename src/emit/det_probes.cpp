// Detection probe modules (see det_probes.h).
#include "emit/det_probes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>

#include "autodiff/vjp.h"
#include "core/error.h"
#include "emit/signature.h"
#include "hlo/passes.h"
#include "layers/param_table.h"

namespace netspec::emit {
namespace {

constexpr const char* kDetProbes[] = {"probe-diou",     "probe-yolov1",   "probe-anchor-loss",
                                      "probe-fpn-loss", "probe-fpn-neck", "probe-fpn-detect"};

// Turns `main` (inputs -> scalar loss) into main(inputs) -> (loss, d input_i for i in wrt); the
// loss function stays as the private @probe the VJP was taken of.
void add_loss_grad(Emitted& e, const std::vector<size_t>& wrt) {
  hlo::Module& m = *e.module;
  hlo::Func* f = m.find("main");
  f->name = "probe";
  f->is_public = false;
  autodiff::VjpOptions vo;
  vo.name = "probe_vjp";
  hlo::Func* g = autodiff::vjp(*f, wrt, vo);
  std::vector<hlo::Type> types;
  for (size_t i = 0; i < f->num_args(); ++i) types.push_back(f->arg(i)->type);
  hlo::Func* main = m.add_func("main", types);
  hlo::Builder b(main->body.get());
  std::vector<hlo::Value*> args;
  for (size_t i = 0; i < types.size(); ++i) args.push_back(main->arg(i));
  const hlo::Type& lt = g->arg(types.size())->type;
  args.push_back(b.constant_splat(1.0, lt));  // d loss = 1
  b.func_return(hlo::inline_call(main->body.get(), *g, args));
  std::erase_if(m.funcs,
                [&](const std::unique_ptr<hlo::Func>& p) { return p.get() == g || p.get() == f; });
  hlo::run_cleanup(m);
  Manifest& mf = e.manifest;
  mf.outputs.resize(1);
  mf.outputs[0].name = "loss";
  mf.outputs[0].role = "loss";
  for (size_t i : wrt) {
    TensorInfo t = mf.inputs.at(i);
    t.name = "d" + t.name;
    t.role = "gradient";
    mf.outputs.push_back(t);
  }
}

// @main(inputs) -> loss for a loss body over plain tensor inputs.
Emitted loss_module(const DetProbe& p, const std::vector<std::pair<std::string, hlo::Type>>& in,
                    const std::function<hlo::Value*(hlo::Builder&, hlo::Func*)>& body) {
  Emitted e;
  e.module = std::make_unique<hlo::Module>();
  std::vector<hlo::Type> types;
  for (const auto& [n, t] : in) types.push_back(t);
  hlo::Func* f = e.module->add_func("main", types);
  hlo::Builder b(f->body.get());
  hlo::Value* loss = body(b, f);
  b.func_return({loss});
  for (size_t i = 0; i < in.size(); ++i)
    e.manifest.inputs.push_back(tensor_info(in[i].first, in[i].second, i == 0 ? "input" : "label"));
  e.manifest.outputs.push_back(tensor_info("loss", loss->type, "loss"));
  e.manifest.batch = p.batch;
  return e;
}

}  // namespace

std::string det_probe_choices() { return fmt::format("{}", fmt::join(kDetProbes, "|")); }

bool is_det_probe(const std::string& module) {
  for (const char* k : kDetProbes)
    if (module == k) return true;
  return false;
}

losses::LossOptions det_probe_loss(const DetProbe& p, int levels, int stride) {
  losses::LossOptions o;
  o.kind = LossKind::yoloAnchor;
  const double side = double(stride * p.grid);  // image side in pixels
  for (int64_t i = 0; i < p.anchors; ++i) {
    o.anchors.push_back((0.02 + 0.03 * double(i)) * side);
    o.anchors.push_back((0.03 + 0.04 * double(i)) * side);
  }
  for (int lv = 0; lv < levels; ++lv) o.fpn_scales.push_back(double(stride << lv));
  o.diou_box = true;
  o.obj_focal_gamma = 2;
  o.cls_focal_gamma = 2;
  return o;
}

NetSpec det_probe_net(const DetProbe& p, int tower) {
  const int64_t side = 2 * p.grid;
  return NetBuilder(fmt::format("det_probe_{}", tower))
      .input(2, side, side)
      .add(ConvBn{2, 3, 3, 2})
      .add(ConvBn{3, 4, 3, 2})
      .add(ConvBn{4, 4, 3, 2})
      .add(FpnDetect{int(5 + p.classes), 3, 4, 4, 4, int(p.anchors), tower})
      .build();
}

Emitted emit_det_probe(const DetProbe& p) {
  if (!is_det_probe(p.module))
    fail("emit", "unknown detection probe '{}' (expected one of {})", p.module,
         det_probe_choices());
  if (p.batch < 1 || p.grid < 4 || p.grid % 4 != 0 || p.anchors < 1 || p.classes < 0)
    fail(p.module,
         "sizes: batch >= 1, grid a multiple of 4, anchors >= 1, classes >= 0 (got batch {}, "
         "grid {}, anchors {}, classes {})",
         p.batch, p.grid, p.anchors, p.classes);
  const int64_t B = p.batch, g = p.grid, A = p.anchors, K = p.classes;
  auto T = [&](Shape s) { return hlo::Type::tensor(p.dtype, std::move(s)); };
  Emitted e;
  std::vector<size_t> wrt{0};
  const std::string& k = p.module;
  if (k == "probe-diou") {
    e = loss_module(p,
                    {{"pred", T({B, 4, g, g})}, {"tgt", T({B, 4, g, g})}, {"mask", T({B, g, g})}},
                    [](hlo::Builder& b, hlo::Func* f) {
                      hlo::Value* c = losses::yolov1_diou_cells(b, f->arg(0), f->arg(1), f->arg(2));
                      return losses::mean_of_sum(b, c, 1.0);
                    });
  } else if (k == "probe-yolov1") {
    losses::LossOptions o;
    o.kind = LossKind::yolov1Masked;
    hlo::Type pt = T({B, 5 + K, g, g});
    e = loss_module(p, {{"pred", pt}, {"labels", losses::label_type(o, pt)}},
                    [o](hlo::Builder& b, hlo::Func* f) {
                      return losses::emit_loss(b, o, f->arg(0), f->arg(1));
                    });
  } else if (k == "probe-anchor-loss" || k == "probe-fpn-loss") {
    const int levels = k == "probe-fpn-loss" ? 3 : 1;
    const losses::LossOptions o = det_probe_loss(p, levels, 8);
    int64_t rows = 0;
    for (int lv = 0; lv < levels; ++lv) rows += (g >> lv) * (g >> lv) * A;
    hlo::Type pt = T({B, rows, 5 + K});
    e = loss_module(p, {{"pred", pt}, {"labels", losses::label_type(o, pt)}},
                    [o](hlo::Builder& b, hlo::Func* f) {
                      return losses::emit_loss(b, o, f->arg(0), f->arg(1));
                    });
  } else {
    const bool neck = k == "probe-fpn-neck";
    NetSpec net = det_probe_net(p, neck ? 0 : 1);
    ParamTable t = build_param_table(net);
    EmitOptions o;
    o.batch = B;
    o.dtype = p.dtype;
    o.loss = losses::for_net(det_probe_loss(p, 3, 2), net);
    if (neck) return emit_module(net, t, p.grad ? ModuleKind::vjp : ModuleKind::forward, o);
    e = emit_module(net, t, ModuleKind::loss, o);
    wrt.clear();
    for (size_t i = 0; i <= t.params.size(); ++i) wrt.push_back(i);  // θ and x
  }
  e.manifest.module = k;
  e.manifest.net = k;
  if (p.grad) add_loss_grad(e, wrt);
  return e;
}

}  // namespace netspec::emit
