// The VJP engine: clones the forward function into a new one (inlining plain calls), propagates
// activity from the differentiated inputs, then walks the ops backwards calling one rule per op
// and accumulating cotangents with add. See docs/autodiff.md.
#include "autodiff/vjp.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstring>
#include <functional>
#include <mutex>

#include "autodiff/rules.h"
#include "hlo/op_family.h"
#include "hlo/op_table.h"
#include "hlo/passes.h"

namespace netspec::autodiff {

using hlo::Block;
using hlo::Builder;
using hlo::Op;
using hlo::OpKind;
using hlo::Type;
using hlo::Value;

// ---------------------------------------------------------------------------------------------
// Custom VJP registry.
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, CustomVjpFn>& registry() {
  static std::map<std::string, CustomVjpFn> r;
  return r;
}

const std::array<VjpRule, hlo::kNumOpKinds>& rule_table() {
  // The misc family (constant, iota, rng_bit_generator) makes values from nothing it could
  // differentiate: zero cotangent.
  static const auto table = hlo::fill_op_table<VjpRule>(
      {register_elementwise_vjps, register_shape_vjps, register_dot_vjps, register_conv_vjps,
       register_reduce_vjps, register_window_vjps, register_gather_sort_vjps, register_control_vjps,
       register_collective_vjps, +[](VjpRule* t) {
         hlo::FamilyTable<VjpRule>(t, "vjp.cpp", {"misc"}).set_family("misc", no_grad);
       }});
  return table;
}

}  // namespace

VjpRule vjp_rule_for(OpKind k) { return rule_table()[static_cast<size_t>(k)]; }

namespace {

bool is_terminator(const Op& op) {
  return op.kind == OpKind::kReturn || op.kind == OpKind::kFuncReturn;
}

}  // namespace

void register_custom_vjp(const std::string& key, CustomVjpFn fn) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry()[key] = std::move(fn);
}

bool unregister_custom_vjp(const std::string& key) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  return registry().erase(key) != 0;
}

const CustomVjpFn* find_custom_vjp(std::string_view callee_name) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& r = registry();
  // std::map nodes are stable, so the pointer stays valid until the key is unregistered.
  if (auto it = r.find(std::string(callee_name)); it != r.end()) return &it->second;
  if (size_t p = callee_name.find("__"); p != std::string_view::npos)
    if (auto it = r.find(std::string(callee_name.substr(0, p))); it != r.end()) return &it->second;
  return nullptr;
}

std::vector<Value*> call_with_custom_vjp(Builder& b, const std::string& name,
                                         const std::vector<Value*>& args,
                                         const hlo::RegionFn& forward, CustomVjpFn backward) {
  hlo::Func* f = b.block()->func();
  if (!f || !f->module)
    fail("custom_vjp", "builder is not inside a function of a module ({})", name);
  hlo::Module& m = *f->module;
  hlo::Func* callee = m.find(name);
  if (!callee) {
    std::vector<Type> types;
    for (Value* a : args) types.push_back(a->type);
    callee = m.add_func(name, types, /*is_public=*/false);
    Builder cb(callee->body.get());
    std::vector<Value*> cargs;
    for (size_t i = 0; i < callee->num_args(); ++i) cargs.push_back(callee->arg(i));
    cb.func_return(forward(cb, cargs));
  }
  register_custom_vjp(name, std::move(backward));
  return b.call(*callee, args);
}

namespace {
// stop_gradient's zero backward under its prefix, registered at load: a module parsed from text
// (a process that never called stop_gradient()) must not differentiate through the identity.
const bool kStopGradientRegistered = [] {
  register_custom_vjp("stop_gradient", [](Builder&, const CustomVjpArgs&) {
    return std::vector<Value*>{nullptr};
  });
  return true;
}();
}  // namespace

Value* stop_gradient(Builder& b, Value* x) {
  (void)kStopGradientRegistered;
  return call_with_custom_vjp(
      b, fmt::format("stop_gradient__{}{}", fmt::join(x->type.shape(), "x"),
                     dtype_name(x->type.dtype())),
      {x},
      [](Builder&, const std::vector<Value*>& a) { return a; },
      [](Builder&, const CustomVjpArgs&) { return std::vector<Value*>{nullptr}; })[0];
}

bool is_differentiable_type(const Type& t) {
  if (t.is_tensor()) return is_float(t.dtype());
  if (t.is_tuple()) {
    for (const auto& e : t.elems())  // a tuple carries cotangents when any element does
      if (is_differentiable_type(e)) return true;
    return false;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the rules.
Value* VjpCtx::dy_or_zero(size_t i) {
  if (!dy.at(i)) dy[i] = zeros(b, op.result(i)->type);
  return dy[i];
}

std::vector<Value*> no_grad(VjpCtx& c) {
  return std::vector<Value*>(c.op.operands.size(), nullptr);
}

Value* zeros(Builder& b, const Type& t) {
  if (t.is_tuple()) {
    std::vector<Value*> es;
    for (const auto& e : t.elems()) es.push_back(zeros(b, e));
    return b.tuple(es);
  }
  return b.constant_splat(0.0, t);
}

Value* reduce_sum(Builder& b, Value* x, const hlo::I64s& dims) {
  if (dims.empty()) return x;
  return b.reduce(x, b.scalar(0.0, x->type.dtype()), dims, OpKind::kAdd);
}

Value* sum_all(Builder& b, Value* x) {
  hlo::I64s dims;
  for (int64_t i = 0; i < x->type.rank(); ++i) dims.push_back(i);
  return reduce_sum(b, x, dims);
}

Value* splat_like(Builder& b, double v, Value* like) { return b.constant_splat(v, like->type); }

std::optional<OpKind> region_combiner(const Block& r) {
  if (r.args.size() != 2 || r.ops.size() != 2) return std::nullopt;
  const Op& op = *r.ops[0];
  const Op& ret = *r.ops[1];
  if (op.operands.size() != 2 || ret.operands.size() != 1 || ret.operand(0) != op.result(0))
    return std::nullopt;
  bool args_in_order = op.operand(0) == r.arg(0) && op.operand(1) == r.arg(1);
  bool args_swapped = op.operand(0) == r.arg(1) && op.operand(1) == r.arg(0);
  if (!args_in_order && !args_swapped) return std::nullopt;
  return op.kind;
}

hlo::I64s inverse_permutation(const hlo::I64s& p) {
  hlo::I64s inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return inv;
}

// ---------------------------------------------------------------------------------------------
// Engine.
const CustomVjpFn* Engine::custom_for(std::string_view callee) const {
  if (auto it = opts_.custom.find(std::string(callee)); it != opts_.custom.end())
    return &it->second;
  return find_custom_vjp(callee);
}

namespace {

// Does any op in `b` (recursively) use an active value?
bool uses_active(const Block& b, const Engine& e) {
  for (const auto& op : b.ops) {
    for (Value* v : op->operands)
      if (e.is_active(v)) return true;
    for (const auto& r : op->regions)
      if (uses_active(*r, e)) return true;
  }
  return false;
}

// A map whose body is only elementwise ops and constants on its scalar arguments, over all dims
// in order, is the same computation on whole tensors: emit that, so the rules apply per op.
bool lift_map(Block* into, const Op& op, hlo::ValueMap& map) {
  const Block& body = *op.region(0);
  const Type& rt = op.result(0)->type;
  const hlo::I64s& dims = op.attrs.get_i64s("dimensions");
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i)) return false;
  if (static_cast<int64_t>(dims.size()) != rt.rank()) return false;
  std::unordered_set<const Value*> local;
  for (const auto& a : body.args) local.insert(a.get());
  for (const auto& bop : body.ops) {
    std::string_view fam = hlo::op_family(bop->kind);
    bool ok = bop->kind == OpKind::kConstant || bop->kind == OpKind::kReturn ||
              ((fam == "unary" || fam == "binary") && bop->kind != OpKind::kBitcastConvert);
    if (!ok || !bop->regions.empty()) return false;
    for (Value* v : bop->operands)
      if (!local.count(v)) return false;  // a captured value would need a broadcast
    for (const auto& r : bop->results) local.insert(r.get());
  }
  hlo::ValueMap inner;
  for (size_t i = 0; i < body.args.size(); ++i)
    inner[body.arg(i)] = hlo::lookup(map, op.operand(i));
  for (const auto& bop : body.ops) {
    if (bop->kind == OpKind::kReturn) {
      for (size_t i = 0; i < op.results.size(); ++i)
        map[op.result(i)] = hlo::lookup(inner, bop->operand(i));
      return true;
    }
    std::vector<Type> types;
    for (const auto& r : bop->results) types.push_back(r->type.with_shape(rt.shape()));
    hlo::Attrs attrs = bop->attrs;
    if (bop->kind == OpKind::kConstant) {  // scalar constant -> splat of the full shape
      const Tensor& v = bop->attrs.get<hlo::DenseAttr>("value").value;
      Tensor full(v.dtype(), rt.shape());
      size_t es = dtype_size(v.dtype());
      for (int64_t j = 0; j < full.numel(); ++j)
        std::memcpy(static_cast<uint8_t*>(full.raw()) + j * static_cast<int64_t>(es), v.raw(), es);
      attrs.set("value", hlo::DenseAttr{full});
    }
    std::vector<Value*> operands;
    for (Value* v : bop->operands) operands.push_back(hlo::lookup(inner, v));
    Op* n = hlo::append_op(into, bop->kind, operands, attrs, types);
    for (size_t i = 0; i < bop->results.size(); ++i) inner[bop->result(i)] = n->result(i);
  }
  return false;
}

}  // namespace

void Engine::mark_active(const Block& blk, size_t begin, size_t end) {
  for (size_t k = begin; k < end; ++k) {
    const Op& op = *blk.ops[k];
    bool act = false;
    for (Value* v : op.operands) act = act || is_active(v);
    for (const auto& r : op.regions) {
      mark_active(*r, 0, r->ops.size());
      act = act || uses_active(*r, *this);
    }
    if (!act) continue;
    for (const auto& r : op.results)
      if (is_differentiable_type(r->type)) active_.insert(r.get());
  }
}

std::vector<Value*> Engine::clone_forward(Block* into, const Block& src, hlo::ValueMap& map) {
  for (const auto& up : src.ops) {
    const Op& op = *up;
    if (is_terminator(op)) {
      std::vector<Value*> outs;
      for (Value* v : op.operands) outs.push_back(hlo::lookup(map, v));
      return outs;
    }
    if (op.kind == OpKind::kCall) {
      const std::string& callee = op.attrs.get<hlo::SymbolRef>("callee").name;
      if (!custom_for(callee)) {
        const hlo::Func* f = module_.find(callee);
        if (!f) fail("vjp", "func.call to unknown function @{}", callee);
        hlo::ValueMap inner;
        for (size_t i = 0; i < f->num_args(); ++i)
          inner[f->arg(i)] = hlo::lookup(map, op.operand(i));
        std::vector<Value*> outs = clone_forward(into, *f->body, inner);
        for (size_t i = 0; i < op.results.size(); ++i) map[op.result(i)] = outs.at(i);
        continue;
      }
    }
    if (op.kind == OpKind::kMap && lift_map(into, op, map)) continue;
    hlo::clone_op(into, op, map);
  }
  return {};
}

void Engine::accumulate(Builder& b, CotMap& cot, Value* primal, Value* c) {
  if (!c) return;
  if (c->type != primal->type)
    fail("vjp", "internal: cotangent type {} differs from primal type {} (op {})", c->type.str(),
         primal->type.str(), primal->def ? std::string(primal->def->name()) : "block argument");
  auto it = cot.find(primal);
  if (it == cot.end()) {
    cot[primal] = c;
    return;
  }
  Value* prev = it->second;
  if (primal->type.is_tuple()) {
    std::vector<Value*> es;
    for (size_t i = 0; i < primal->type.elems().size(); ++i) {
      int64_t k = static_cast<int64_t>(i);
      es.push_back(b.add(b.get_tuple_element(prev, k), b.get_tuple_element(c, k)));
    }
    it->second = b.tuple(es);
  } else {
    it->second = b.add(prev, c);  // cotangents of a value used several times add up
  }
}

std::vector<Value*> Engine::active_captures(const Op& op) const {
  std::unordered_set<const Value*> inner;
  std::vector<Value*> out;
  std::unordered_set<const Value*> seen;
  std::function<void(const Block&)> defs = [&](const Block& b) {
    for (const auto& a : b.args) inner.insert(a.get());
    for (const auto& o : b.ops) {
      for (const auto& r : o->results) inner.insert(r.get());
      for (const auto& r : o->regions) defs(*r);
    }
  };
  std::function<void(const Block&)> uses = [&](const Block& b) {
    for (const auto& o : b.ops) {
      for (Value* v : o->operands)
        if (!inner.count(v) && is_active(v) && is_differentiable_type(v->type) &&
            seen.insert(v).second)
          out.push_back(v);
      for (const auto& r : o->regions) uses(*r);
    }
  };
  for (const auto& r : op.regions) defs(*r);
  for (const auto& r : op.regions) uses(*r);
  return out;
}

void Engine::backprop(Builder& b, Block& blk, size_t n_ops, CotMap& cot) {
  const auto& table = rule_table();
  for (size_t k = n_ops; k-- > 0;) {
    const Op& op = *blk.ops[k];
    if (is_terminator(op)) continue;
    bool any_active = false;
    for (const auto& r : op.results) any_active = any_active || is_active(r.get());
    if (!any_active) continue;
    std::vector<Value*> dy(op.results.size(), nullptr);
    bool any = false;
    for (size_t i = 0; i < op.results.size(); ++i) {
      auto it = cot.find(op.result(i));
      if (it != cot.end()) dy[i] = it->second, any = true;
    }
    if (!any) continue;
    VjpRule rule = table[static_cast<size_t>(op.kind)];
    if (!rule)
      fail("vjp", "no VJP rule for {} (it lies between the differentiated inputs and the outputs)",
           op.name());
    if (!op.regions.empty() && op.kind != OpKind::kIf && op.kind != OpKind::kCase &&
        op.kind != OpKind::kWhile && !active_captures(op).empty())
      fail("vjp",
           "{} uses a differentiated value inside its region; only if, case and while support that",
           op.name());
    VjpCtx c{b, op, std::move(dy), {}, *this, {}};
    for (Value* v : op.operands) c.wants.push_back(is_active(v) && is_differentiable_type(v->type));
    std::vector<Value*> dx = rule(c);
    if (dx.size() != op.operands.size())
      fail("vjp", "internal: rule for {} returned {} cotangents (expected {})", op.name(),
           dx.size(), op.operands.size());
    for (size_t i = 0; i < dx.size(); ++i)
      if (c.wants[i]) accumulate(b, cot, op.operand(i), dx[i]);
    for (auto& [v, cv] : c.captured_cots) accumulate(b, cot, v, cv);
  }
}

// ---------------------------------------------------------------------------------------------
hlo::Func* vjp(const hlo::Func& f, const std::vector<size_t>& diff_inputs, const VjpOptions& opts) {
  if (!f.module) fail("vjp", "function @{} is not in a module", f.name);
  hlo::Module& m = *f.module;
  std::string name = opts.name.empty() ? f.name + "_vjp" : opts.name;
  if (m.find(name)) fail("vjp", "module already has a function named @{}", name);
  for (size_t i : diff_inputs) {
    if (i >= f.num_args())
      fail("vjp", "differentiated input {} out of range (function @{} has {} arguments)", i, f.name,
           f.num_args());
    if (!is_differentiable_type(f.arg(i)->type))
      fail("vjp", "input {} of @{} has type {} (expected a float tensor)", i, f.name,
           f.arg(i)->type.str());
  }
  std::vector<Type> arg_types = f.arg_types();
  for (const auto& t : f.result_types) arg_types.push_back(t);
  hlo::Func* g = m.add_func(name, arg_types, /*is_public=*/true);
  Engine eng(opts, m);
  Block* body = g->body.get();

  // Forward: a copy of f's body (plain calls inlined).
  hlo::ValueMap map;
  for (size_t i = 0; i < f.num_args(); ++i) map[f.arg(i)] = g->arg(i);
  std::vector<Value*> ys = eng.clone_forward(body, *f.body, map);
  if (ys.size() != f.result_types.size())
    fail("vjp", "function @{} returns {} values (its signature says {})", f.name, ys.size(),
         f.result_types.size());
  for (size_t i : diff_inputs) eng.set_active(g->arg(i));
  eng.mark_active(*body, 0, body->ops.size());

  // Backward: seed each output with its cotangent argument.
  Builder b(body);
  CotMap cot;
  for (size_t i = 0; i < ys.size(); ++i)
    if (eng.is_active(ys[i])) eng.accumulate(b, cot, ys[i], g->arg(f.num_args() + i));
  size_t n_fwd = body->ops.size();
  eng.backprop(b, *body, n_fwd, cot);

  std::vector<Value*> outs = ys;
  for (size_t i : diff_inputs) {
    auto it = cot.find(g->arg(i));
    outs.push_back(it != cot.end() ? it->second : zeros(b, g->arg(i)->type));
  }
  b.func_return(outs);
  if (opts.cleanup) hlo::run_cleanup(*g);
  return g;
}

}  // namespace netspec::autodiff
