// The forward traversal and the forward / eval / cam modules.
#include <fmt/format.h>

#include "core/error.h"
#include "emit/emit.h"
#include "emit/signature.h"
#include "hlo/passes.h"

namespace netspec::emit {

ForwardOut emit_forward_graph(hlo::Builder& b, const NetSpec& net, const ParamTable& table,
                              const std::vector<hlo::Value*>& params, hlo::Value* x, bool train,
                              const std::vector<layers::BnStats>& running, layers::DropPath* drop,
                              hlo::Value* dropout_mask, int64_t sync_bn_replicas,
                              hlo::Value* cam_delta, Precision precision) {
  layers::check_lowerable(net);
  if (params.size() != table.params.size())
    fail("emit", "parameter count (got {}, expected {})", params.size(), table.params.size());
  if (!train && running.size() != table.bns.size())
    fail("emit", "BN running stats (got {}, expected {})", running.size(), table.bns.size());
  ForwardOut out;
  const size_t cls = dropout_mask ? classifier_layer(net) : net.layers.size();
  std::vector<hlo::Value*> history;  // history[i]: layer i's input
  const size_t delta_at = cam_delta ? grad_cam_layer(table) : net.layers.size();
  bool delta_used = false;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const LayerInfo& info = table.layers[i];
    out.layer_begin.push_back(b.block()->ops.size());
    history.push_back(x);
    layers::LowerCtx c{b,
                       net,
                       info,
                       {},
                       train,
                       {},
                       &out.batch_stats,
                       train ? drop : nullptr,
                       &history,
                       &out.cam_features,
                       &table};
    c.bn_sync_replicas = sync_bn_replicas;
    c.params.assign(params.begin() + info.first_param,
                    params.begin() + info.first_param + info.num_params);
    if (!train)
      c.running.assign(running.begin() + info.first_bn,
                       running.begin() + info.first_bn + info.num_bn);
    if (i == delta_at && cam_delta->type == x->type) {
      x = b.add(x, cam_delta);
      delta_used = true;
      out.cam_features = x;
    }
    if (layers::traits(info.kind).cam_source) out.cam_features = x;
    if (i == cls) x = b.multiply(x, dropout_mask);  // classifier dropout (inverted scaling)
    x = layers::lower_layer(c, net.layers[i], x);
    cast_contractions(*b.block(), out.layer_begin.back(), precision);
  }
  if (drop && !drop->masks.empty() && drop->used != drop->masks.size())
    fail("emit", "drop-path masks used (got {}, expected {})", drop->used, drop->masks.size());
  if (cam_delta && !delta_used)
    fail("emit grad_cam",
         "net {}: the cam features were not found (got no globalAvgPool or last-convolution "
         "output of type {})",
         net.name, cam_delta->type.str());
  if (train && out.batch_stats.size() != table.bns.size())
    fail("emit", "BN batch stats (got {}, expected {})", out.batch_stats.size(), table.bns.size());
  out.logits = x;
  return out;
}

size_t grad_cam_layer(const ParamTable& t) {
  const size_t n = t.layers.size();
  for (size_t i = n; i-- > 0;)
    if (layers::traits(t.layers[i].kind).cam_source) return i;
  for (size_t i = n; i-- > 0;) {
    const LayerInfo& l = t.layers[i];
    bool kernel = false;  // an OIHW convolution weight
    for (int p = l.first_param; p < l.first_param + l.num_params; ++p)
      kernel = kernel || t.params[static_cast<size_t>(p)].shape.size() == 4;
    // The convolution's output, unless it is the net's own output (a segmentation head): then
    // the convolution before it.
    if (kernel && l.out.size() == 3 && i + 1 < n) return i + 1;
  }
  return n;
}

void erase_func(hlo::Module& m, const hlo::Func* f) {
  std::erase_if(m.funcs, [&](const std::unique_ptr<hlo::Func>& p) { return p.get() == f; });
}

void return_and_clean(hlo::Builder& b, hlo::Module& m, hlo::Func& f, const Signature& out,
                      std::initializer_list<const hlo::Func*> inlined) {
  b.func_return(out.values);
  for (const hlo::Func* g : inlined) erase_func(m, g);
  hlo::run_cleanup(f);
}

std::vector<hlo::Value*> args_of(const hlo::Func* f, size_t from, size_t n) {
  std::vector<hlo::Value*> v;
  for (size_t i = from; i < from + n; ++i) v.push_back(f->arg(i));
  return v;
}

Shape with_batch(int64_t batch, const Shape& s) {
  Shape r{batch};
  r.insert(r.end(), s.begin(), s.end());
  return r;
}

void Signature::add(const std::string& name, const hlo::Type& t, const std::string& role,
                    int64_t count) {
  types.push_back(t);
  infos.push_back({name, t.shape(), t.dtype(), role, count});
}

hlo::Value* Signature::add_value(const std::string& name, hlo::Value* v, const std::string& role,
                                 int64_t count) {
  values.push_back(v);
  add(name, v->type, role, count);
  return v;
}

void add_params(Signature& s, const ParamTable& t, DType dt, const std::string& role,
                const std::string& prefix) {
  for (const auto& p : t.params) s.add(prefix + p.name, hlo::Type::tensor(dt, p.shape), role);
}

void add_running(Signature& s, const ParamTable& t, DType dt) {
  for (const auto& bn : t.bns) {
    s.add(bn.name + ".running_mean", hlo::Type::tensor(dt, {bn.channels}), "bn_running_stat");
    s.add(bn.name + ".running_var", hlo::Type::tensor(dt, {bn.channels}), "bn_running_stat");
  }
}

void add_batch_stats(Signature& s, const ParamTable& t, const std::vector<layers::BnStats>& st) {
  for (size_t k = 0; k < t.bns.size(); ++k) {
    s.add_value(t.bns[k].name + ".batch_mean", st[k].mean, "bn_batch_stat", st[k].count);
    s.add_value(t.bns[k].name + ".batch_var", st[k].var, "bn_batch_stat", st[k].count);
  }
}

Emitted emit_forward_like(const NetSpec& net, const ParamTable& t, ModuleKind kind,
                          const EmitOptions& o) {
  bool train = kind == ModuleKind::forward;
  Signature in;
  add_params(in, t, o.dtype, "param");
  if (!train) add_running(in, t, o.dtype);
  in.add("x", input_type(net, t, o), "input");
  // Gradient accumulation: the train step's keep masks after x (EmitOptions::masked_forward).
  const std::vector<TensorInfo> masks =
      train && o.masked_forward ? train_masks(net, t, o) : std::vector<TensorInfo>{};
  for (const auto& mk : masks) {
    in.types.push_back(hlo::Type::tensor(mk.dtype, mk.shape));
    in.infos.push_back(mk);
  }
  Emitted e;
  e.module = std::make_unique<hlo::Module>();
  e.module->name = fmt::format("{}_{}", sanitize(net.name), enum_name(kind));
  hlo::Func* f = e.module->add_func("main", in.types);
  hlo::Builder b(f->body.get());
  std::vector<hlo::Value*> params;
  for (size_t i = 0; i < t.params.size(); ++i) params.push_back(f->arg(i));
  std::vector<layers::BnStats> running;
  size_t pos = t.params.size();
  if (!train)
    for (size_t k = 0; k < t.bns.size(); ++k, pos += 2)
      running.push_back({f->arg(pos), f->arg(pos + 1)});
  layers::DropPath drop;
  hlo::Value* dropout = nullptr;
  bind_masks(f, pos + 1, masks, drop, dropout);
  ForwardOut fo =
      emit_forward_graph(b, net, t, params, f->arg(pos), train, running,
                         drop.masks.empty() ? nullptr : &drop, dropout, 1, nullptr, o.precision);
  Signature out;
  if (kind == ModuleKind::cam) {
    if (!fo.cam_features)
      fail("emit cam",
           "net {} has no globalAvgPool layer or detector head (cam needs a feature map)",
           net.name);
    out.add_value("features", fo.cam_features, "output");
  }
  out.add_value("logits", fo.logits, "output");
  if (train) add_batch_stats(out, t, fo.batch_stats);
  b.func_return(out.values);
  e.manifest = make_manifest(net, kind, o, in, out);
  return e;
}

}  // namespace netspec::emit
