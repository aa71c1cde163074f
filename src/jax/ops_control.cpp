// JAX forms of the control family: while -> lax.fori_loop when its trip count is static (JAX
// reverse-differentiates that, not lax.while_loop), if -> lax.cond, case -> lax.switch, tuples
// as Python tuples, and func.call -> the callee's Python function, or jax.custom_vjp with
// netspec's backward translated when the callee has a custom VJP. The terminators are written
// by the enclosing region or function, never as ops.
#include "autodiff/vjp.h"
#include "core/error.h"
#include "hlo/builder.h"
#include "hlo/op_family.h"
#include "hlo/passes.h"
#include "jax/ops.h"

namespace netspec::jax {
namespace {

using hlo::OpKind;
using Pack = Translator::Pack;

std::string while_loop(Translator& t, const hlo::Op& op) {
  // A counted loop (hlo::counted_loop): JAX's fori_loop with static bounds (a scan) can be
  // reverse-differentiated, its while_loop cannot (flash attention's key loop is one of these).
  if (auto n = hlo::counted_loop(op)) {
    std::string b = t.region(*op.region(1), Pack::kOneTuple, true);
    return fmt::format("lax.fori_loop(0, {}, lambda _, s: {}(s), ({},))", n->trips, b,
                       t.operands(op));
  }
  std::string c = t.region(*op.region(0), Pack::kOneTuple, false);
  std::string b = t.region(*op.region(1), Pack::kOneTuple, true);
  return fmt::format("lax.while_loop({}, {}, ({},))", c, b, t.operands(op));
}

std::string if_(Translator& t, const hlo::Op& op) {
  std::string tb = t.region(*op.region(0), Pack::kNone, true);
  std::string fb = t.region(*op.region(1), Pack::kNone, true);
  return fmt::format("lax.cond({}, {}, {})", t.name(op.operand(0)), tb, fb);
}

std::string case_(Translator& t, const hlo::Op& op) {
  std::vector<std::string> bs;
  for (const auto& r : op.regions) bs.push_back(t.region(*r, Pack::kNone, true));
  return fmt::format("lax.switch({}, [{}])", t.name(op.operand(0)), fmt::join(bs, ", "));
}

// netspec's registered backward of @f (a CustomVjpFn builds IR) built into a function
// (args..., results..., result cotangents...) -> one cotangent per arg, translated: `None` where
// the builder gives none (zero: AF2's stop-gradient) or the arg carries no cotangent (ints).
std::string custom_vjp_backward(Translator& t, const hlo::Func& f, const autodiff::CustomVjpFn& fn,
                                const std::string& py) {
  const size_t na = f.num_args(), nr = f.result_types.size();
  std::vector<hlo::Type> in;
  for (size_t i = 0; i < na; ++i) in.push_back(f.arg(i)->type);
  for (int k = 0; k < 2; ++k) in.insert(in.end(), f.result_types.begin(), f.result_types.end());
  hlo::Module bm;  // the builder may add helper functions (nested custom calls) here
  hlo::Func* g = bm.add_func(py, in);
  hlo::Builder b(g->body.get());
  autodiff::CustomVjpArgs a;
  for (size_t i = 0; i < na; ++i) {
    a.args.push_back(g->arg(i));
    a.wants.push_back(autodiff::is_differentiable_type(f.arg(i)->type));
  }
  for (size_t i = 0; i < nr; ++i) {
    a.results.push_back(g->arg(na + i));
    a.result_cots.push_back(g->arg(na + nr + i));
  }
  std::vector<hlo::Value*> cots = fn(b, a);
  if (cots.size() != na)
    fail("emit jax", "custom VJP of @{} returned {} cotangents (expected {})", f.name, cots.size(),
         na);
  std::vector<hlo::Value*> rets;
  for (size_t i = 0; i < na; ++i)
    if (cots[i] && a.wants[i]) rets.push_back(cots[i]);
  b.func_return(rets);
  return t.function_def(*g, py, [&](const Translator& bt, const hlo::Op&) {
    std::vector<std::string> r;
    for (size_t i = 0; i < na; ++i) r.push_back(cots[i] && a.wants[i] ? bt.name(cots[i]) : "None");
    return fmt::format("return ({},)", fmt::join(r, ", "));
  });
}

// A plain call is the callee's Python function. A call whose callee has a custom VJP
// (autodiff::call_with_custom_vjp: flash attention, AF2's stop-gradient) is jax.custom_vjp with
// the callee as forward and netspec's backward (the program's _custom_vjp), so JAX
// differentiates it as netspec does: a stop-gradient stays one.
std::string call(Translator& t, const hlo::Op& op) {
  const std::string& callee = op.attrs.get<hlo::SymbolRef>("callee").name;
  std::string fn = "fn_" + callee;
  const hlo::Func* f = t.module().find(callee);
  if (!f) fail("emit jax", "func.call: no function @{}", callee);
  auto& callees = t.callees();
  if (!callees.count(fn)) {
    callees[fn] = "";  // recursion guard
    callees[fn] = t.function_def(*f, fn, [](const Translator& ft, const hlo::Op& ret) {
      return fmt::format("return {}", ft.operands(ret));
    });
  }
  const autodiff::CustomVjpFn* custom = autodiff::find_custom_vjp(callee);
  if (!custom) return fmt::format("{}({})", fn, t.operands(op));
  std::string vjp = fn + "_vjp";  // sorts after fn: defined after it in the program
  if (!callees.count(vjp)) {
    callees[vjp] = "";
    callees[vjp] = custom_vjp_backward(t, *f, *custom, fn + "_bwd") +
                   fmt::format("\n\n{} = _custom_vjp({}, {}_bwd)", vjp, fn, fn);
  }
  return fmt::format("{}({})", vjp, t.operands(op));
}

}  // namespace

void register_control_ops(OpRule* t) {
  hlo::FamilyTable<OpRule> ft(t, "jax/ops_control.cpp", {"control"});
  using K = OpKind;
  ft.set(K::kWhile, translated_tuple(while_loop));
  ft.set(K::kIf, translated_tuple(if_));
  ft.set(K::kCase, translated_tuple(case_));
  ft.set(K::kTuple, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("({},)", t.operands(op));
         }));
  ft.set(K::kGetTupleElement, translated([](Translator& t, const hlo::Op& op) {
           return fmt::format("{}[{}]", t.name(op.operand(0)), op.attrs.get_int("index"));
         }));
  ft.set(K::kOptimizationBarrier, translated_tuple([](Translator& t, const hlo::Op& op) {
           return fmt::format("lax.optimization_barrier(({},))", t.operands(op));
         }));
  ft.set(K::kCall, translated(call));
  const char* terminator = "a terminator: the enclosing region or function writes its return line";
  ft.set(K::kReturn, refused(terminator));
  ft.set(K::kFuncReturn, refused(terminator));
}

}  // namespace netspec::jax
