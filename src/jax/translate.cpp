// IR -> JAX: a function cut into one Python function per layer (see translate.h).
#include "jax/translate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "jax/translator.h"

namespace netspec::jax {

std::string py_tuple(const std::vector<int64_t>& v) {
  if (v.size() == 1) return fmt::format("({},)", v[0]);
  return fmt::format("({})", fmt::join(v, ", "));
}

namespace {

const hlo::Block* top_block_of(const hlo::Value* v) { return v->def ? v->def->parent : v->block; }

// The values a group of top-level ops reads from outside itself (first-use order), recursing into
// regions: operands defined neither by the group's ops nor inside their regions.
std::vector<const hlo::Value*> free_values(const hlo::Block& top, size_t begin, size_t end) {
  std::unordered_set<const hlo::Op*> inside;
  for (size_t i = begin; i < end; ++i) {
    inside.insert(top.ops[i].get());
    for (const auto& r : top.ops[i]->regions)
      hlo::walk(*r, [&](const hlo::Op& o) { inside.insert(&o); });
  }
  std::vector<const hlo::Value*> out;
  std::unordered_set<const hlo::Value*> seen;
  auto use = [&](const hlo::Value* v) {
    bool internal = v->def ? inside.count(v->def) != 0 : v->block != &top;
    if (!internal && seen.insert(v).second) out.push_back(v);
  };
  for (size_t i = begin; i < end; ++i) {
    for (const hlo::Value* v : top.ops[i]->operands) use(v);
    for (const auto& r : top.ops[i]->regions)
      hlo::walk(*r, [&](const hlo::Op& o) {
        for (const hlo::Value* v : o.operands) use(v);
      });
  }
  return out;
}

bool is_constant(const hlo::Value* v) { return v->def && v->def->kind == hlo::OpKind::kConstant; }

}  // namespace

PyFunc translate(const hlo::Func& f, const std::vector<ArgRef>& args,
                 const std::vector<Group>& groups, std::map<std::string, std::string>& callees,
                 const std::vector<std::string>& targets) {
  const hlo::Block& top = *f.body;
  const hlo::Op* term = top.terminator();
  if (!term) fail("emit jax", "function {} has no return", f.name);
  if (args.size() != f.num_args())
    fail("emit jax", "{}: argument names (got {}, expected {})", f.name, args.size(), f.num_args());
  std::unordered_map<const hlo::Op*, size_t> group_of;
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t i = groups[g].begin; i < groups[g].end; ++i) group_of[top.ops[i].get()] = g;
  if (group_of.size() + 1 != top.ops.size())
    fail("emit jax", "{}: layer groups cover {} ops (expected {})", f.name, group_of.size(),
         top.ops.size() - 1);

  std::vector<std::vector<const hlo::Value*>> frees(groups.size());
  for (size_t g = 0; g < groups.size(); ++g)
    frees[g] = free_values(top, groups[g].begin, groups[g].end);
  // A group's outputs: its values read by later groups or returned.
  std::vector<std::vector<const hlo::Value*>> outs(groups.size());
  std::vector<std::set<const hlo::Value*>> out_set(groups.size());
  auto mark_out = [&](const hlo::Value* v) {
    if (!v->def || is_constant(v) || top_block_of(v) != &top) return;
    size_t g = group_of.at(v->def);
    if (out_set[g].insert(v).second) outs[g].push_back(v);
  };
  for (size_t g = 0; g < groups.size(); ++g)
    for (const hlo::Value* v : frees[g]) mark_out(v);
  for (const hlo::Value* v : term->operands) mark_out(v);
  std::unordered_map<const hlo::Op*, size_t> pos;
  for (size_t i = 0; i < top.ops.size(); ++i) pos[top.ops[i].get()] = i;
  std::unordered_set<const hlo::Value*> read_later;
  for (const auto& fr : frees) read_later.insert(fr.begin(), fr.end());
  std::unordered_map<const hlo::Value*, size_t> result_of;  // value -> its first result index
  for (size_t i = term->operands.size(); i-- > 0;) result_of[term->operand(i)] = i;
  // Outputs: the values later layers read first, then those only returned; program order.
  for (auto& o : outs)
    std::sort(o.begin(), o.end(), [&](const hlo::Value* a, const hlo::Value* b) {
      bool la = read_later.count(a) != 0, lb = read_later.count(b) != 0;
      if (la != lb) return la;
      return a->def != b->def ? pos.at(a->def) < pos.at(b->def) : a->index < b->index;
    });

  PyFunc pf;
  std::unordered_map<const hlo::Value*, std::string> driver;  // driver-level names
  auto arg_expr = [&](const hlo::Value* v) -> std::string {
    const ArgRef& a = args.at(static_cast<size_t>(v->index));
    return a.dict.empty() ? a.key : fmt::format("{}[\"{}\"]", a.dict, a.key);
  };
  for (size_t i = 0; i < f.num_args(); ++i) driver[f.arg(i)] = arg_expr(f.arg(i));

  for (size_t g = 0; g < groups.size(); ++g) {
    if (outs[g].empty()) continue;  // dead code: nothing later reads it
    Translator t(callees, *f.module);
    std::set<std::string> dicts;
    std::vector<std::string> params, call_args;
    std::vector<const hlo::Value*> consts;
    for (const hlo::Value* v : frees[g]) {
      if (v->is_block_arg() && !args.at(static_cast<size_t>(v->index)).dict.empty()) {
        dicts.insert(args[static_cast<size_t>(v->index)].dict);
        t.bind(v, arg_expr(v));
      } else if (is_constant(v)) {
        consts.push_back(v);
      } else {  // a positional argument keeps its name, an earlier group's value its h<g>
        std::string n = v->is_block_arg() ? args[static_cast<size_t>(v->index)].key : driver.at(v);
        params.push_back(n);
        t.bind(v, n);
        call_args.push_back(driver.at(v));
      }
    }
    std::vector<std::string> sig(dicts.begin(), dicts.end());
    std::vector<std::string> cargs = sig;
    sig.insert(sig.end(), params.begin(), params.end());
    cargs.insert(cargs.end(), call_args.begin(), call_args.end());
    t.line(fmt::format("def {}({}):", groups[g].name, fmt::join(sig, ", ")));
    t.indent(1);
    if (!groups[g].comment.empty()) t.line(fmt::format("\"\"\"{}\"\"\"", groups[g].comment));
    for (const hlo::Value* v : consts) t.op(*v->def);
    for (size_t i = groups[g].begin; i < groups[g].end; ++i) t.op(*top.ops[i]);
    std::vector<std::string> rets;
    for (const hlo::Value* v : outs[g]) rets.push_back(t.name(v));
    t.line(fmt::format("return {}", fmt::join(rets, ", ")));
    pf.defs.push_back(t.text());

    std::vector<std::string> lhs;
    size_t flowing = 0;
    for (const hlo::Value* v : outs[g]) flowing += read_later.count(v);
    for (size_t k = 0; k < outs[g].size(); ++k) {
      const hlo::Value* v = outs[g][k];
      std::string n = flowing <= 1 && k == 0 ? fmt::format("h{}", g) : fmt::format("h{}_{}", g, k);
      // A value only returned goes straight to its target (`stats["..."]`) when one is given.
      if (!read_later.count(v) && result_of.count(v) && result_of[v] < targets.size() &&
          !targets[result_of[v]].empty())
        n = targets[result_of[v]];
      driver[v] = n;
      lhs.push_back(n);
    }
    pf.body.push_back(
        fmt::format("{} = {}({})", fmt::join(lhs, ", "), groups[g].name, fmt::join(cargs, ", ")));
  }
  for (const hlo::Value* v : term->operands)
    pf.results.push_back(is_constant(v)
                             ? constant_expr(v->def->attrs.get<hlo::DenseAttr>("value").value)
                             : driver.at(v));
  return pf;
}

}  // namespace netspec::jax
