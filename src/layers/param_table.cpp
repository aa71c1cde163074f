// ParamTable construction: each layer's body runs in accounting mode (lower.h); its declarations
// become params and BN layers, its emitted dot_general / convolution ops its FLOPs.
#include "layers/param_table.h"

#include "core/checked.h"
#include "layers/lower.h"

namespace netspec {
namespace {

// 2 FLOPs per multiply-accumulate of a dot_general (result elements x contracted size) or a
// convolution (result elements x kernel elements per output feature; groups are in the kernel).
int64_t op_flops(const hlo::Op& op) {
  if (op.kind == hlo::OpKind::kDotGeneral) {
    const auto& d = op.attrs.get<hlo::DotDims>("dot_dimension_numbers");
    int64_t k = 1;
    for (int64_t i : d.lhs_contracting) k = checked_mul(k, op.operand_type(0).dim(i), "flops");
    return checked_product({2, op.result()->type.numel(), k}, "flops");
  }
  if (op.kind == hlo::OpKind::kConvolution) {
    const auto& d = op.attrs.get<hlo::ConvDims>("dimension_numbers");
    const hlo::Type& w = op.operand_type(1);
    return checked_product(
        {2, op.result()->type.numel(), w.numel() / w.dim(d.kernel_output_feature)}, "flops");
  }
  return 0;
}

// The net's input value at batch 1: integer ids when the first layer says so.
hlo::Type input_type(const NetSpec& net, const Shape& in) {
  Shape s{1};
  s.insert(s.end(), in.begin(), in.end());
  const auto& t = layers::traits(net.layers[0]);
  bool ids = t.ids_input && t.ids_input(net.layers[0]);
  return hlo::Type::tensor(ids ? DType::kI32 : DType::kF32, s);
}

}  // namespace

ParamTable build_param_table(const NetSpec& net) {
  ParamTable t;
  if (net.layers.empty()) fail("net " + net.name, "has no layers");
  if (net.inputChannels <= 0 || net.inputHeight < 0 || net.inputWidth < 0 ||
      (net.inputHeight == 0) != (net.inputWidth == 0))
    fail("net " + net.name,
         "bad input shape (got {}x{}x{}, expected C > 0 and H, W both > 0 or both 0)",
         net.inputChannels, net.inputHeight, net.inputWidth);
  for (const auto& [name, v] : {std::pair{"bnEps", net.bnEps}, {"lnEps", net.lnEps}})
    if (!(v > 0) || !std::isfinite(v))
      fail("net " + net.name, "{} must be a finite number > 0 (got {})", name, v);
  t.input = net.inputHeight > 0 ? Shape{net.inputChannels, net.inputHeight, net.inputWidth}
                                : Shape{net.inputChannels};
  hlo::Module scratch;
  hlo::Func* f = scratch.add_func("account", {input_type(net, t.input)});
  hlo::Builder b(f->body.get());
  hlo::Value* x = f->arg(0);
  std::vector<hlo::Value*> history;  // history[i]: layer i's input
  std::vector<Shape> skips;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& layer = net.layers[i];
    LayerInfo info;
    info.index = static_cast<int>(i);
    info.kind = std::string(layer_kind(layer));
    info.in = Shape(x->type.shape().begin() + 1, x->type.shape().end());
    info.first_param = static_cast<int>(t.params.size());
    info.first_bn = static_cast<int>(t.bns.size());
    history.push_back(x);
    layers::Accounting a{t, info, f->body.get(), skips};
    layers::LowerCtx c{b, net, info, {}, true, {}, nullptr, nullptr, &history, nullptr};
    c.acct = &a;
    if (std::holds_alternative<std::monostate>(layer)) c.fail("empty layer");
    if (!layers::find_emitter(info.kind)) c.fail("internal: layer kind has no body");
    const size_t first_op = f->body->ops.size();
    x = layers::lower_layer(c, layer, x);
    if (x->type.rank() < 1 || x->type.dim(0) != 1)
      c.fail("internal: body returned [{}] (expected a batch-1 value)",
             fmt::join(x->type.shape(), ", "));
    info.out = Shape(x->type.shape().begin() + 1, x->type.shape().end());
    if (info.out.empty()) c.fail("internal: body returned a scalar");
    for (int64_t d : info.out)
      if (d <= 0) c.fail("output shape has a non-positive dim ([{}])", fmt::join(info.out, ", "));
    info.flops = a.explicit_flops;
    for (size_t k = first_op; k < f->body->ops.size(); ++k)
      info.flops = checked_add(info.flops, op_flops(*f->body->ops[k]), "flops");
    t.layers.push_back(std::move(info));
  }
  t.output = t.layers.back().out;
  return t;
}

}  // namespace netspec
