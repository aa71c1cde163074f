// The loss, train_step, vjp and optimizer modules. The train step is one fused @main: the
// forward (train mode) and loss, the backward from autodiff::vjp of that same function (inlined,
// cotangent 1 for the loss and 0 for the BN stats), then the optimizer tail.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include "autodiff/vjp.h"
#include "core/error.h"
#include "emit/signature.h"
#include "hlo/passes.h"

namespace netspec::emit {
namespace {

void add_loss_inputs(Signature& in, const NetSpec& net, const ParamTable& t, const EmitOptions& o) {
  add_params(in, t, o.dtype, "param");
  in.add("x", input_type(net, t, o), "input");
  hlo::Type logits = hlo::Type::tensor(o.dtype, with_batch(o.batch, t.output));
  in.add("labels", losses::label_type(o.loss, logits), "label");
}

void add_masks(Signature& in, const std::vector<TensorInfo>& masks) {
  for (const auto& mk : masks) {
    in.types.push_back(hlo::Type::tensor(mk.dtype, mk.shape));
    in.infos.push_back(mk);
  }
}

// Data parallel: (1/R)·Σ_r v_r over the R replicas (one all_reduce for all of `vs`); v if R = 1.
std::vector<hlo::Value*> replica_mean(hlo::Builder& b, const std::vector<hlo::Value*>& vs,
                                      int replicas) {
  if (replicas <= 1 || vs.empty()) return vs;
  std::vector<hlo::Value*> sums = b.all_reduce(vs, {}, hlo::OpKind::kAdd);
  for (auto& v : sums)
    v = b.multiply(v, b.constant_splat(1.0 / static_cast<double>(replicas), v->type));
  return sums;
}

// @name(params..., x, labels, masks...) -> (loss[, batch_mean/var per BN, correct]); with
// replicas the loss is the global mean over all shards and `correct` (i32, the train step's
// running-accuracy count, losses::correct_count) the global sum (the same in every replica).
hlo::Func* add_loss_func(hlo::Module& m, const std::string& name, const NetSpec& net,
                         const ParamTable& t, const EmitOptions& o, bool with_stats, Signature& in,
                         Signature& out, const std::vector<TensorInfo>& masks) {
  add_loss_inputs(in, net, t, o);
  add_masks(in, masks);
  hlo::Func* f = m.add_func(name, in.types);
  hlo::Builder b(f->body.get());
  size_t np = t.params.size();
  // Mask arguments: the drop-path ones in order, then "dropout" (train_masks' order).
  layers::DropPath drop;
  hlo::Value* dropout = nullptr;
  bind_masks(f, np + 2, masks, drop, dropout);
  ForwardOut fo = emit_forward_graph(b, net, t, args_of(f, 0, np), f->arg(np), true, {},
                                     drop.masks.empty() ? nullptr : &drop, dropout,
                                     o.sync_bn ? o.replicas : 1, nullptr, o.precision);
  hlo::Value* loss = losses::emit_loss(b, o.loss, fo.logits, f->arg(np + 1));
  out.add_value("loss", replica_mean(b, {loss}, o.replicas).at(0), "loss");
  if (with_stats) {  // the train step's
    add_batch_stats(out, t, fo.batch_stats);
    if (hlo::Value* c = losses::correct_count(b, o.loss, fo.logits, f->arg(np + 1))) {
      if (o.replicas > 1) c = b.all_reduce({c}, {}, hlo::OpKind::kAdd).at(0);
      out.add_value("correct", c, "metric");
    }
  }
  b.func_return(out.values);
  return f;
}

// Moves the ops of f's body that only `v` (a func.return operand) needs to just before the
// return, in their order: the count ops sit between the forward and the backward otherwise, and
// the printed train step would renumber every backward value. Uses by ops nested in regions
// count as uses by their top-level op.
void sink_to_return(hlo::Func& f, const hlo::Value* v) {
  hlo::Block& b = *f.body;
  std::unordered_map<const hlo::Op*, const hlo::Op*> top;  // any op -> its top-level ancestor
  std::unordered_map<const hlo::Op*, std::vector<const hlo::Op*>> users;  // top-level, by top
  std::function<void(const hlo::Block&, const hlo::Op*)> walk = [&](const hlo::Block& blk,
                                                                    const hlo::Op* root) {
    for (const auto& op : blk.ops) {
      const hlo::Op* r = root ? root : op.get();
      top[op.get()] = r;
      for (const hlo::Value* x : op->operands)
        if (x->def && top.count(x->def) && top[x->def] != r) users[top[x->def]].push_back(r);
      for (const auto& reg : op->regions) walk(*reg, r);
    }
  };
  walk(b, nullptr);
  if (!v->def || top[v->def] != v->def) return;
  std::set<const hlo::Op*> moved{v->def};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& op : b.ops) {
      if (moved.count(op.get()) || op.get() == b.terminator()) continue;
      const auto& us = users[op.get()];
      const bool only_moved = !us.empty() && std::all_of(us.begin(), us.end(), [&](auto* u) {
        return moved.count(u) > 0;
      });
      if (only_moved) grew = moved.insert(op.get()).second || grew;
    }
  }
  for (const hlo::Op* u : users[v->def])
    if (u != b.terminator()) return;  // v has another user: leave the order alone
  std::unique_ptr<hlo::Op> ret = std::move(b.ops.back());
  b.ops.pop_back();
  std::stable_partition(b.ops.begin(), b.ops.end(),
                        [&](const std::unique_ptr<hlo::Op>& op) { return !moved.count(op.get()); });
  b.ops.push_back(std::move(ret));
}

std::vector<size_t> iota_n(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

void add_optimizer_inputs(Signature& in, const ParamTable& t, const EmitOptions& o) {
  for (const auto& slot : optim::state_slots(o.optim))
    add_params(in, t, o.dtype, "optimizer_state", slot + ".");
}

void add_hyper(Signature& in, const EmitOptions& o) {
  in.add("lr", hlo::Type::tensor(o.dtype, {}), "hyperparameter");
  in.add("step", hlo::Type::tensor(DType::kI32, {}), "hyperparameter");
}

void add_update_outputs(Signature& out, const ParamTable& t, const optim::UpdateResult& u,
                        const EmitOptions& o) {
  for (size_t i = 0; i < t.params.size(); ++i)
    out.add_value(t.params[i].name, u.params[i], "param");
  auto slots = optim::state_slots(o.optim);
  for (size_t s = 0; s < slots.size(); ++s)
    for (size_t i = 0; i < t.params.size(); ++i)
      out.add_value(slots[s] + "." + t.params[i].name, u.state[s * t.params.size() + i],
                    "optimizer_state");
}

}  // namespace

Emitted emit_train_like(const NetSpec& net, const ParamTable& t, ModuleKind kind,
                        const EmitOptions& o) {
  layers::check_lowerable(net);
  Emitted e;
  e.module = std::make_unique<hlo::Module>();
  hlo::Module& m = *e.module;
  m.name = fmt::format("{}_{}", sanitize(net.name), enum_name(kind));
  const size_t np = t.params.size();
  Signature in, out;

  const bool masked = kind == ModuleKind::loss || kind == ModuleKind::train_step ||
                      (kind == ModuleKind::vjp && o.masked_forward);
  const std::vector<TensorInfo> masks = masked ? train_masks(net, t, o) : std::vector<TensorInfo>{};
  if (kind == ModuleKind::loss) {
    add_loss_func(m, "main", net, t, o, false, in, out, masks);
  } else if (kind == ModuleKind::train_step) {
    optim::state_slots(o.optim);  // refuses unlowered optimizers before any op is built
    Signature lin, lout;
    hlo::Func* lf = add_loss_func(m, "loss_fn", net, t, o, true, lin, lout, masks);
    lf->is_public = false;
    autodiff::VjpOptions vo;
    vo.name = "loss_fn_vjp";
    hlo::Func* g = autodiff::vjp(*lf, iota_n(np), vo);
    add_params(in, t, o.dtype, "param");
    add_optimizer_inputs(in, t, o);
    const size_t ns = in.types.size() - np;
    in.add("x", lin.types[np], "input");
    in.add("labels", lin.types[np + 1], "label");
    add_hyper(in, o);
    add_masks(in, masks);  // after lr, step: P, state, x, labels, lr, step, masks
    hlo::Func* f = m.add_func("main", in.types);
    hlo::Builder b(f->body.get());
    std::vector<hlo::Value*> args = args_of(f, 0, np);
    args.push_back(f->arg(np + ns));
    args.push_back(f->arg(np + ns + 1));
    for (size_t k = 0; k < masks.size(); ++k) args.push_back(f->arg(np + ns + 4 + k));
    // Cotangents: 1 for the loss, 0 for the stats (and the i32 count, which takes none).
    for (size_t k = 0; k < lout.values.size(); ++k)
      args.push_back(b.constant_splat(k == 0 ? 1.0 : 0.0, lout.values[k]->type));
    std::vector<hlo::Value*> r = hlo::inline_call(f->body.get(), *g, args);
    // Each replica's VJP seeds 1 on the global mean loss L, so Σ_r g_r = R·∇L: average them.
    std::vector<hlo::Value*> grads =
        replica_mean(b, {r.begin() + lout.values.size(), r.end()}, o.replicas);
    optim::UpdateResult u =
        optim::apply_update(b, o.optim, t, args_of(f, 0, np), grads, args_of(f, np, ns),
                            f->arg(np + ns + 2), f->arg(np + ns + 3));
    add_update_outputs(out, t, u, o);
    out.add_value("loss", r[0], "loss");
    for (size_t k = 1; k < lout.values.size(); ++k)
      out.add_value(lout.infos[k].name, r[k], lout.infos[k].role, lout.infos[k].count);
    return_and_clean(b, m, *f, out, {g, lf});
    if (out.infos.back().name == "correct")
      sink_to_return(*f, f->body->terminator()->operands.back());
  } else if (kind == ModuleKind::vjp) {
    add_params(in, t, o.dtype, "param");
    hlo::Type xt = input_type(net, t, o);
    in.add("x", xt, "input");
    const bool dx = is_float(xt.dtype());  // token ids (i32) have no gradient
    add_masks(in, masks);                  // P, x, masks (not differentiated), ybar
    hlo::Func* fwd = m.add_func("net_fwd", in.types, false);
    {
      hlo::Builder fb(fwd->body.get());
      layers::DropPath drop;
      hlo::Value* dropout = nullptr;
      bind_masks(fwd, np + 1, masks, drop, dropout);
      ForwardOut fo = emit_forward_graph(fb, net, t, args_of(fwd, 0, np), fwd->arg(np), true, {},
                                         drop.masks.empty() ? nullptr : &drop, dropout, 1, nullptr,
                                         o.precision);
      fb.func_return({fo.logits});
    }
    autodiff::VjpOptions vo;
    vo.name = "net_fwd_vjp";
    hlo::Func* g = autodiff::vjp(*fwd, iota_n(np + (dx ? 1 : 0)), vo);
    hlo::Type yt = fwd->result_types.at(0);
    in.add("ybar", yt, "cotangent");
    hlo::Func* f = m.add_func("main", in.types);
    std::vector<hlo::Value*> r =
        hlo::inline_call(f->body.get(), *g, args_of(f, 0, np + 2 + masks.size()));
    hlo::Builder b(f->body.get());
    for (size_t i = 0; i < np; ++i) out.add_value("d." + t.params[i].name, r[1 + i], "gradient");
    if (dx) out.add_value("d.x", r[1 + np], "gradient");
    return_and_clean(b, m, *f, out, {g, fwd});
  } else if (kind == ModuleKind::optimizer) {
    add_params(in, t, o.dtype, "param");
    add_params(in, t, o.dtype, "gradient", "d.");
    add_optimizer_inputs(in, t, o);
    const size_t ns = in.types.size() - 2 * np;
    add_hyper(in, o);
    hlo::Func* f = m.add_func("main", in.types);
    hlo::Builder b(f->body.get());
    optim::UpdateResult u =
        optim::apply_update(b, o.optim, t, args_of(f, 0, np), args_of(f, np, np),
                            args_of(f, 2 * np, ns), f->arg(2 * np + ns), f->arg(2 * np + ns + 1));
    add_update_outputs(out, t, u, o);
    return_and_clean(b, m, *f, out, {});
  } else {
    fail("emit", "{} is not a training module", enum_name(kind));
  }
  e.manifest = make_manifest(net, kind, o, in, out);
  return e;
}

}  // namespace netspec::emit
