// VJP rules of control flow, tuples and calls. if/case: a new if/case on the same
// predicate whose branches re-emit the forward branch and differentiate it, returning the
// cotangents of the outer values the branches use. func.call: the callee's registered custom
// backward (plain calls were inlined before differentiation). while: a counted loop (static trip
// count, hlo::counted_loop) runs again stacking each turn's incoming state, then a loop over the
// turns in reverse differentiates the body at each stacked state (JAX's scan transpose); a while
// without a static trip count is refused by name (wrap it in a custom VJP).
#include "autodiff/rules.h"
#include "hlo/op_family.h"

namespace netspec::autodiff {
namespace {

using hlo::Block;
using hlo::Builder;
using hlo::OpKind;
using hlo::Value;
using V = std::vector<Value*>;

// Builds the backward of branch region `r`: forward re-emitted inside the new region (branch
// values are not visible outside it), seeded with the op's result cotangents.
hlo::RegionFn branch_backward(VjpCtx& c, size_t r, const V& caps) {
  return [&c, r, caps](Builder& rb, const V&) {
    Block* blk = rb.block();
    hlo::ValueMap map;
    V outs = c.engine.clone_forward(blk, *c.op.region(r), map);
    size_t n = blk->ops.size();
    c.engine.mark_active(*blk, 0, n);
    CotMap cot;
    for (size_t i = 0; i < outs.size(); ++i)
      if (c.dy[i] && c.engine.is_active(outs[i])) c.engine.accumulate(rb, cot, outs[i], c.dy[i]);
    c.engine.backprop(rb, *blk, n, cot);
    V ret;
    for (Value* v : caps) {
      auto it = cot.find(v);
      ret.push_back(it != cot.end() ? it->second : zeros(rb, v->type));
    }
    return ret;
  };
}

// y = if(p) {A} else {B}: (d captures) = if(p) {∂A} else {∂B}; dp = 0.
V if_(VjpCtx& c) {
  V caps = c.engine.active_captures(c.op);
  V out(c.op.operands.size(), nullptr);
  if (caps.empty()) return out;
  V r = c.b.if_(c.x(0), branch_backward(c, 0, caps), branch_backward(c, 1, caps));
  for (size_t i = 0; i < caps.size(); ++i) c.captured_cots.push_back({caps[i], r[i]});
  return out;
}

// y = case(i) {B0, B1, ...}: (d captures) = case(i) {∂B0, ∂B1, ...}; di = 0.
V case_(VjpCtx& c) {
  V caps = c.engine.active_captures(c.op);
  V out(c.op.operands.size(), nullptr);
  if (caps.empty()) return out;
  std::vector<hlo::RegionFn> branches;
  for (size_t k = 0; k < c.op.regions.size(); ++k) branches.push_back(branch_backward(c, k, caps));
  V r = c.b.case_(c.x(0), branches);
  for (size_t i = 0; i < caps.size(); ++i) c.captured_cots.push_back({caps[i], r[i]});
  return out;
}

// func.call @f with a custom VJP: d args = backward(args, results, d results).
V call(VjpCtx& c) {
  const std::string& name = c.op.attrs.get<hlo::SymbolRef>("callee").name;
  const CustomVjpFn* fn = c.engine.custom_for(name);
  if (!fn) fail("vjp", "func.call @{} has no custom VJP and was not inlined", name);
  CustomVjpArgs a;
  a.args.assign(c.op.operands.begin(), c.op.operands.end());
  for (size_t i = 0; i < c.op.results.size(); ++i) {
    a.results.push_back(c.y(i));
    a.result_cots.push_back(c.dy_or_zero(i));
  }
  a.wants = c.wants;
  V r = (*fn)(c.b, a);
  if (r.size() != a.args.size())
    fail("vjp", "custom VJP of @{} returned {} cotangents (expected {})", name, r.size(),
         a.args.size());
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i] && r[i]->type != a.args[i]->type)
      fail("vjp", "custom VJP of @{}: cotangent {} has type {} (expected {})", name, i,
           r[i]->type.str(), a.args[i]->type.str());
  return r;
}

// The values of region `src` cloned into rb's block with its arguments bound to `args`; returns
// what its terminator yields.
V clone_region(VjpCtx& c, Builder& rb, const Block& src, const V& args) {
  hlo::ValueMap map;
  for (size_t i = 0; i < args.size(); ++i) map[src.arg(i)] = args[i];
  return c.engine.clone_forward(rb.block(), src, map);
}

// y = while(x) {cond} {body}, T = its static trip count. Forward again from x, storing the state
// entering turn t in row t of a [T, ...] stack per carry; then for t = T-1 .. 0: re-emit the
// body on state t, seed its results with the carried cotangents, backprop: the cotangents of
// its arguments are those of state t, and captured values' cotangents add up over the turns.
// Memory: T copies of the state (the scan's residuals); time: one more forward of the loop.
V while_(VjpCtx& c) {
  const hlo::Op& op = c.op;
  const auto loop = hlo::counted_loop(op);
  const size_t n = op.operands.size();
  const std::string at =
      op.loc.line > 0 ? fmt::format(" (line {}, column {})", op.loc.line, op.loc.col) : "";
  if (!loop || !is_integer(op.operand(loop->counter)->type.dtype()))
    fail("vjp",
         "stablehlo.while{} is differentiable only as a counted loop (an integer counter from a "
         "constant, +1 a turn, `counter < constant` as its condition: a static trip count); put "
         "other loops in a function with a custom VJP (autodiff::call_with_custom_vjp)",
         at);
  for (size_t j = 0; j < n; ++j)
    if (!op.operand(j)->type.is_tensor())
      fail("vjp",
           "stablehlo.while{} carries a {} (state {}); only tensor states are differentiable", at,
           op.operand(j)->type.str(), j);
  const int64_t T = loop->trips;
  const DType it = op.operand(loop->counter)->type.dtype();
  V caps = c.engine.active_captures(op);
  auto float_state = [&](size_t j) { return is_differentiable_type(op.operand(j)->type); };
  V out(n, nullptr);
  if (T == 0) {  // y = x
    for (size_t j = 0; j < n; ++j)
      if (c.wants[j]) out[j] = c.dy_or_zero(j);
    return out;
  }
  Builder& b = c.b;
  const Block &cond = *op.region(0), &body = *op.region(1);
  auto index = [it](Builder& rb, int64_t v) { return rb.scalar(static_cast<double>(v), it); };
  auto starts = [&](Builder& rb, Value* row, const hlo::Type& t) {
    V at = {row};
    for (int64_t d = 0; d < t.rank(); ++d) at.push_back(index(rb, 0));
    return at;
  };
  auto stacked = [T](const hlo::Type& t) {
    Shape s = t.shape();
    s.insert(s.begin(), T);
    return s;
  };

  // 1. The forward again, stacking the state entering each turn: stack_j[counter - start] = s_j.
  // A state the loop only writes, a row a turn (hlo::state_written_whole_unread: a scan's output
  // stack), is not stacked: nothing in the body reads it, and the VJP of its row write needs
  // only the cotangent, so its final value stands in for it when the body is re-emitted.
  std::vector<size_t> kept;  // the stacked states
  for (size_t j = 0; j < n; ++j)
    if (!hlo::state_written_whole_unread(op, j)) kept.push_back(j);
  V init(op.operands.begin(), op.operands.end());
  for (size_t j : kept)
    init.push_back(b.constant_splat(
        0, hlo::Type::tensor(op.operand(j)->type.dtype(), stacked(op.operand(j)->type))));
  const int64_t start = loop->start;
  const size_t ctr = loop->counter;
  V fwd = b.while_(
      init,
      [&](Builder& rb, const V& s) {
        return clone_region(c, rb, cond, V(s.begin(), s.begin() + n));
      },
      [&](Builder& rb, const V& s) {
        V next = clone_region(c, rb, body, V(s.begin(), s.begin() + n));
        // (From 0 the counter itself: the stacks are then written whole before any read, so
        // the cpu planner skips their zero fill.)
        Value* row = start == 0 ? s[ctr] : rb.subtract(s[ctr], index(rb, start));
        for (size_t k = 0; k < kept.size(); ++k) {
          Value* sj = s[kept[k]];
          Shape one = sj->type.shape();
          one.insert(one.begin(), 1);
          next.push_back(
              rb.dynamic_update_slice(s[n + k], rb.reshape(sj, one), starts(rb, row, sj->type)));
        }
        return next;
      });
  V stacks(n, nullptr);
  for (size_t k = 0; k < kept.size(); ++k) stacks[kept[k]] = fwd[n + k];

  // 2. Reverse over the turns: state [u, d state_j (float j), d capture_k], t = T-1-u.
  std::vector<size_t> fs;
  for (size_t j = 0; j < n; ++j)
    if (float_state(j)) fs.push_back(j);
  V rinit = {index(b, 0)};
  for (size_t j : fs) rinit.push_back(c.dy_or_zero(j));
  for (Value* v : caps) rinit.push_back(zeros(b, v->type));
  V rev = b.while_(
      rinit, [&](Builder& rb, const V& s) { return V{rb.compare(s[0], index(rb, T), "LT")}; },
      [&](Builder& rb, const V& s) {
        Value* t = rb.subtract(index(rb, T - 1), s[0]);
        V state;
        for (size_t j = 0; j < n; ++j) {
          const hlo::Type& ty = op.operand(j)->type;
          Shape one = ty.shape();
          one.insert(one.begin(), 1);
          state.push_back(
              stacks[j]
                  ? rb.reshape(rb.dynamic_slice(stacks[j], starts(rb, t, ty), one), ty.shape())
                  : c.y(j));
        }
        Block* blk = rb.block();
        const size_t first = blk->ops.size();
        V outs = clone_region(c, rb, body, state);
        for (size_t j : fs) c.engine.set_active(state[j]);
        c.engine.mark_active(*blk, first, blk->ops.size());
        CotMap cot;
        for (size_t k = 0; k < fs.size(); ++k)
          if (c.engine.is_active(outs[fs[k]])) c.engine.accumulate(rb, cot, outs[fs[k]], s[1 + k]);
        c.engine.backprop(rb, *blk, blk->ops.size(), cot);
        V next = {rb.add(s[0], index(rb, 1))};
        for (size_t j : fs) {
          auto f = cot.find(state[j]);
          next.push_back(f != cot.end() ? f->second : zeros(rb, state[j]->type));
        }
        for (size_t k = 0; k < caps.size(); ++k) {
          auto f = cot.find(caps[k]);
          Value* acc = s[1 + fs.size() + k];
          next.push_back(f != cot.end() ? rb.add(acc, f->second) : acc);
        }
        return next;
      });
  for (size_t k = 0; k < fs.size(); ++k)
    if (c.wants[fs[k]]) out[fs[k]] = rev[1 + k];
  for (size_t k = 0; k < caps.size(); ++k)
    c.captured_cots.push_back({caps[k], rev[1 + fs.size() + k]});
  return out;
}

V tuple(VjpCtx& c) {  // dx_i = get_tuple_element(dy, i)
  V out;
  for (size_t i = 0; i < c.op.operands.size(); ++i)
    out.push_back(c.wants[i] ? c.b.get_tuple_element(c.dy[0], static_cast<int64_t>(i)) : nullptr);
  return out;
}

V get_tuple_element(VjpCtx& c) {  // dt = tuple(0, ..., dy at index, ..., 0)
  int64_t idx = c.op.attrs.get_int("index");
  const hlo::Type& tt = c.x(0)->type;
  V es;
  for (size_t i = 0; i < tt.elems().size(); ++i)
    es.push_back(static_cast<int64_t>(i) == idx ? c.dy[0] : zeros(c.b, tt.elems()[i]));
  return {c.b.tuple(es)};
}

V optimization_barrier(VjpCtx& c) { return c.dy; }  // dx_i = dy_i

}  // namespace

void register_control_vjps(VjpRule* t) {
  hlo::FamilyTable<VjpRule> ft(t, "vjp_control.cpp", {"control"});
  ft.set(OpKind::kIf, if_);
  ft.set(OpKind::kCase, case_);
  ft.set(OpKind::kCall, call);
  ft.set(OpKind::kWhile, while_);
  ft.set(OpKind::kTuple, tuple);
  ft.set(OpKind::kGetTupleElement, get_tuple_element);
  ft.set(OpKind::kOptimizationBarrier, optimization_barrier);
}

}  // namespace netspec::autodiff
