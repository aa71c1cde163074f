// Cloning, inlining and element-type rewriting (see passes.h).
#include "hlo/passes.h"

namespace netspec::hlo {

Value* lookup(const ValueMap& map, Value* v) {
  auto it = map.find(v);
  return it == map.end() ? v : it->second;
}

Op* append_op(Block* into, OpKind kind, std::vector<Value*> operands, Attrs attrs,
              const std::vector<Type>& result_types) {
  auto op = std::make_unique<Op>(kind);
  op->operands = std::move(operands);
  op->attrs = std::move(attrs);
  for (size_t i = 0; i < result_types.size(); ++i) {
    auto v = std::make_unique<Value>();
    v->type = result_types[i];
    v->def = op.get();
    v->index = static_cast<int>(i);
    op->results.push_back(std::move(v));
  }
  op->parent = into;
  into->ops.push_back(std::move(op));
  return into->ops.back().get();
}

namespace {

void clone_block_into(const Block& src, Block* dst, ValueMap& map) {
  for (const auto& a : src.args) map[a.get()] = dst->add_arg(a->type);
  for (const auto& op : src.ops) clone_op(dst, *op, map);
}

}  // namespace

Op* clone_op(Block* into, const Op& op, ValueMap& map) {
  std::vector<Value*> operands;
  operands.reserve(op.operands.size());
  for (Value* v : op.operands) operands.push_back(lookup(map, v));
  Op* n = append_op(into, op.kind, std::move(operands), op.attrs, op.result_types());
  n->loc = op.loc;
  for (const auto& r : op.regions) {
    auto b = std::make_unique<Block>();
    b->parent_op = n;
    clone_block_into(*r, b.get(), map);
    n->regions.push_back(std::move(b));
  }
  for (size_t i = 0; i < op.results.size(); ++i) map[op.result(i)] = n->result(i);
  return n;
}

std::unique_ptr<Module> clone_module(const Module& m) {
  auto out = std::make_unique<Module>();
  out->name = m.name;
  for (const auto& f : m.funcs) {
    Func* nf = out->add_func(f->name, f->arg_types(), f->is_public);
    nf->result_types = f->result_types;
    nf->loc = f->loc;
    ValueMap map;
    for (size_t i = 0; i < f->num_args(); ++i) map[f->arg(i)] = nf->arg(i);
    for (const auto& op : f->body->ops) clone_op(nf->body.get(), *op, map);
  }
  return out;
}

std::vector<Value*> inline_call(Block* into, const Func& callee, const std::vector<Value*>& args) {
  if (args.size() != callee.num_args())
    fail("inline", "call to @{} has {} arguments (expected {})", callee.name, args.size(),
         callee.num_args());
  ValueMap map;
  for (size_t i = 0; i < args.size(); ++i) map[callee.arg(i)] = args[i];
  std::vector<Value*> results;
  for (const auto& op : callee.body->ops) {
    if (op->kind == OpKind::kFuncReturn || op->kind == OpKind::kReturn) {
      for (Value* v : op->operands) results.push_back(lookup(map, v));
      break;
    }
    clone_op(into, *op, map);
  }
  return results;
}

namespace {

void remap_operands(Op& op, const ValueMap& map) {
  for (Value*& v : op.operands) v = lookup(map, v);
  for (auto& r : op.regions)
    for (auto& inner : r->ops) remap_operands(*inner, map);
}

size_t count_ops(const Block& b) {
  size_t n = 0;
  walk(b, [&](const Op&) { ++n; });
  return n;
}

// One sweep over `b` (and, recursively, its regions): each func.call is replaced in place by
// its callee's ops while `budget` (ops the inlining may add) lasts. Returns the number of calls
// inlined (calls the callees held stay calls).
int inline_calls_once(Block& b, const Module& m, const Func& self, size_t& budget) {
  int n = 0;
  for (auto& op : b.ops)
    for (auto& r : op->regions) n += inline_calls_once(*r, m, self, budget);
  bool any = false;
  for (const auto& op : b.ops) any |= op->kind == OpKind::kCall;
  if (!any) return n;
  std::vector<std::unique_ptr<Op>> old = std::move(b.ops);
  std::vector<std::unique_ptr<Op>> inlined;  // kept alive until every use is remapped
  b.ops.clear();
  ValueMap results;
  for (auto& op : old) {
    remap_operands(*op, results);
    const Func* callee =
        op->kind == OpKind::kCall ? m.find(op->attrs.get<SymbolRef>("callee").name) : nullptr;
    const size_t size = callee ? count_ops(*callee->body) : 0;
    if (!callee || callee == &self || size > budget) {
      b.ops.push_back(std::move(op));
      continue;
    }
    budget -= size;
    std::vector<Value*> r = inline_call(&b, *callee, op->operands);
    for (size_t i = 0; i < r.size(); ++i) results[op->result(i)] = r[i];
    inlined.push_back(std::move(op));
    ++n;
  }
  return n;
}

}  // namespace

int inline_calls(Func& f, int max_depth, size_t max_added_ops) {
  if (!f.module) return 0;
  int total = 0;
  size_t budget = max_added_ops;
  for (int depth = 0; depth < max_depth; ++depth) {
    const int n = inline_calls_once(*f.body, *f.module, f, budget);
    if (n == 0) break;
    total += n;
  }
  return total;
}

namespace {

Type convert_type(const Type& t, DType from, DType to) {
  if (t.is_tensor()) return t.dtype() == from ? t.with_dtype(to) : t;
  if (t.is_tuple()) {
    std::vector<Type> es;
    for (const auto& e : t.elems()) es.push_back(convert_type(e, from, to));
    return Type::tuple(std::move(es));
  }
  return t;
}

Tensor convert_tensor(const Tensor& t, DType to) {
  Tensor out(to, t.shape());
  visit_dtype(to, "convert_float_types", [&](auto zero) {
    using E = decltype(zero);
    E* p = out.data<E>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<E>(t.as_double(i));
  });
  return out;
}

void convert_block(Block& b, DType from, DType to) {
  for (auto& a : b.args) a->type = convert_type(a->type, from, to);
  for (auto& op : b.ops) {
    if (op->kind == OpKind::kBitcastConvert) {
      bool touches = op->operand_type(0).dtype() == from || op->result(0)->type.dtype() == from;
      if (touches)
        fail("convert_float_types", "bitcast_convert of {} cannot be rewritten to {}",
             dtype_name(from), dtype_name(to));
    }
    for (auto& r : op->results) r->type = convert_type(r->type, from, to);
    if (auto* d = op->attrs.get_if<DenseAttr>("value"); d && d->value.dtype() == from)
      op->attrs.set("value", DenseAttr{convert_tensor(d->value, to)});
    for (auto& r : op->regions) convert_block(*r, from, to);
  }
}

}  // namespace

void convert_float_types(Module& m, DType from, DType to) {
  for (auto& f : m.funcs) {
    convert_block(*f->body, from, to);
    for (auto& t : f->result_types) t = convert_type(t, from, to);
  }
}

}  // namespace netspec::hlo
