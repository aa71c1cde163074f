// while / if / case / func.call on the cpu plan: each region is planned once as a sub-plan (its own
// steps, fused groups and arena, reused on every iteration) and reads enclosing values through the
// scope chain. A while's loop state lives in the step's result buffers: the body reads them as
// its arguments and its results are copied back after each iteration (values passed through
// unchanged are not copied), so an iteration allocates nothing.
#include <cstring>

#include "exec/cpu/plan/plan.h"
#include "exec/limits.h"

namespace netspec::exec::cpu {
namespace {

using hlo::OpKind;

State& sub_state(const Plan& P, State& S, int sub) {
  if (S.subs.size() < P.subplans.size()) S.subs.resize(P.subplans.size());
  auto& s = S.subs[static_cast<size_t>(sub)];
  if (!s) s = std::make_unique<State>();
  return *s;
}

bool overlaps(const Tensor& a, const Tensor& b) {
  auto* pa = static_cast<const uint8_t*>(a.raw());
  auto* pb = static_cast<const uint8_t*>(b.raw());
  return pa && pb && a.nbytes() && b.nbytes() && pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

void copy_into(Tensor& dst, const Tensor& src) {
  if (dst.raw() != src.raw() && dst.nbytes() > 0) std::memcpy(dst.raw(), src.raw(), dst.nbytes());
}

// Copies sub-plan `sub`'s results into the step's result slots. A result that shares storage
// with another slot (a swapped or reshaped loop value) is read out before any slot is written.
void store_results(const Plan& sub, const State& Ss, State& S, const Step& st) {
  std::vector<std::pair<size_t, Tensor>> held;
  for (size_t i = 0; i < st.outs.size(); ++i) {
    const Tensor& r = Ss.vals[static_cast<size_t>(sub.results[i])];
    for (size_t j = 0; j < st.outs.size(); ++j)
      if (j != i && overlaps(r, S.vals[static_cast<size_t>(st.outs[j])])) {
        held.emplace_back(i, r.clone());
        break;
      }
  }
  for (size_t i = 0, h = 0; i < st.outs.size(); ++i) {
    Tensor& dst = S.vals[static_cast<size_t>(st.outs[i])];
    if (h < held.size() && held[h].first == i) {
      copy_into(dst, held[h++].second);
      continue;
    }
    copy_into(dst, Ss.vals[static_cast<size_t>(sub.results[i])]);
  }
}

// while: state = operands; while cond(state): state = body(state). Bounded by run_limits() as
// the ref kernel is.
void run_while(const Plan& P, State& S, const Step& st, ref::RunContext& ctx,
               const ref::Scope& scope) {
  const Plan& cond = *P.subplans[static_cast<size_t>(st.subs[0])];
  const Plan& body = *P.subplans[static_cast<size_t>(st.subs[1])];
  State& Sc = sub_state(P, S, st.subs[0]);
  State& Sb = sub_state(P, S, st.subs[1]);
  std::vector<const Tensor*> state(st.outs.size());
  for (size_t i = 0; i < st.outs.size(); ++i) {
    Tensor& out = S.vals[static_cast<size_t>(st.outs[i])];
    copy_into(out, S.vals[static_cast<size_t>(st.ins[i])]);
    state[i] = &out;
  }
  for (int64_t it = 0;; ++it) {
    run_steps(cond, Sc, state.data(), ctx, &scope);
    const Tensor& pred = Sc.vals[static_cast<size_t>(cond.results.at(0))];
    if (static_cast<const uint8_t*>(pred.raw())[0] == 0) break;
    check_while_iteration(it);
    run_steps(body, Sb, state.data(), ctx, &scope);
    store_results(body, Sb, S, st);
  }
  drop_refs(cond, Sc);
  drop_refs(body, Sb);
}

// func.call: the callee's plan runs on the operands (it sees no values of the caller).
void run_call(const Plan& P, State& S, const Step& st, ref::RunContext& ctx) {
  const Plan& callee = *P.subplans[static_cast<size_t>(st.subs[0])];
  State& Sc = sub_state(P, S, st.subs[0]);
  std::vector<const Tensor*> args;
  for (int id : st.ins) args.push_back(&S.vals[static_cast<size_t>(id)]);
  run_steps(callee, Sc, args.data(), ctx, nullptr);
  store_results(callee, Sc, S, st);
  drop_refs(callee, Sc);
}

// if (region 0 when true, else 1) / case (branch `index`; out of range: the last one).
void run_branch(const Plan& P, State& S, const Step& st, ref::RunContext& ctx,
                const ref::Scope& scope) {
  const Tensor& sel = S.vals[static_cast<size_t>(st.ins.at(0))];
  size_t branch;
  if (st.op->kind == OpKind::kIf) {
    branch = static_cast<const uint8_t*>(sel.raw())[0] != 0 ? 0 : 1;
  } else {
    const int64_t n = static_cast<int64_t>(st.subs.size()), i = sel.as_int64(0);
    branch = static_cast<size_t>(i < 0 || i >= n ? n - 1 : i);
  }
  const Plan& sub = *P.subplans[static_cast<size_t>(st.subs[branch])];
  State& Ss = sub_state(P, S, st.subs[branch]);
  run_steps(sub, Ss, nullptr, ctx, &scope);
  store_results(sub, Ss, S, st);
  drop_refs(sub, Ss);
}

// Every value crossing the op's boundary is a tensor of the size and dtype on both sides (a
// while's condition gives one i1).
bool signature_ok(const hlo::Op& op, const Plan& sub, size_t region) {
  const bool cond = op.kind == OpKind::kWhile && region == 0;
  if (sub.results.size() != (cond ? 1 : op.results.size())) return false;
  for (size_t i = 0; i < sub.results.size(); ++i) {
    const hlo::Type& t = sub.vals[static_cast<size_t>(sub.results[i])].type;
    if (!t.is_tensor()) return false;
    if (cond ? (t.dtype() != DType::kI1 || t.numel() != 1)
             : (t.dtype() != op.result(i)->type.dtype() || t.numel() != op.result(i)->type.numel()))
      return false;
  }
  return true;
}

}  // namespace

bool plan_regions(Plan& P, const hlo::Op& op, Step& st) {
  if (op.kind == OpKind::kCall) {
    // Planned per call site; recursion deeper than kMaxCallDepth stays on ref.
    constexpr int kMaxCallDepth = 8;
    static thread_local int depth = 0;
    const hlo::Module* m = op.module();
    const hlo::Func* f = m ? m->find(op.attrs.get<hlo::SymbolRef>("callee").name) : nullptr;
    if (!f || depth >= kMaxCallDepth || f->num_args() != op.operands.size()) return false;
    ++depth;
    std::unique_ptr<Plan> sp;
    try {
      sp = build_block_plan(*f->body, &P);
    } catch (...) {
      --depth;
      throw;
    }
    --depth;
    if (sp->whole_on_ref || !signature_ok(op, *sp, 0)) return false;
    sp->func = f;
    st.subs.push_back(static_cast<int>(P.subplans.size()));
    P.subplans.push_back(std::move(sp));
    return true;
  }
  if (op.kind != OpKind::kWhile && op.kind != OpKind::kIf && op.kind != OpKind::kCase) return false;
  if (op.kind == OpKind::kWhile &&
      (op.regions.size() != 2 || op.operands.size() != op.results.size()))
    return false;
  std::vector<std::unique_ptr<Plan>> subs;
  for (size_t r = 0; r < op.regions.size(); ++r) {
    auto sp = build_block_plan(*op.region(r), &P);
    if (sp->whole_on_ref || !signature_ok(op, *sp, r)) return false;
    subs.push_back(std::move(sp));
  }
  for (auto& sp : subs) {
    st.subs.push_back(static_cast<int>(P.subplans.size()));
    P.subplans.push_back(std::move(sp));
  }
  return true;
}

void run_region_step(const Plan& P, State& S, const Step& st, ref::RunContext& ctx,
                     const ref::Scope& scope) {
  if (st.op->kind == OpKind::kWhile)
    run_while(P, S, st, ctx, scope);
  else if (st.op->kind == OpKind::kCall)
    run_call(P, S, st, ctx);
  else
    run_branch(P, S, st, ctx, scope);
}

}  // namespace netspec::exec::cpu
