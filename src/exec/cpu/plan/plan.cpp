// The cpu executor's planner (see cpu_backend.h): value ids, one step per op (fast kernel, view,
// fused group or ref fallback), liveness, and arena buffers with in-place reuse.
#include "exec/cpu/plan/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/thread_pool.h"
#include "hlo/op_table.h"
#include "hlo/passes.h"

namespace netspec::exec::cpu {
namespace {

using hlo::OpKind;

const Compiler* compiler_table() {
  static const auto table = hlo::fill_op_table<Compiler>(
      {register_elementwise, register_shape, register_dynamic_slice, register_gather,
       register_reduce, register_dot, register_conv, register_window});
  return table.data();
}

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string_view(v) != "0";
}

int id_of(const Plan& P, const hlo::Value* v) {
  auto it = P.ids.find(v);
  return it == P.ids.end() ? -1 : it->second;
}

// Ops folded into the op that reads or feeds them, and given no step of their own: kernel
// reverses read only by one convolution (the VJP's flipped weights: the conv reads w directly),
// and transposes that are the only reader of a dot_general (the dot writes the transposed layout
// itself: vit's head merge [B, H, T, D] -> [B, T, H, D] and the VJP's transposed gradients).
struct StepFolds {
  std::unordered_map<const hlo::Op*, Compiled> conv_rev;
  std::unordered_map<const hlo::Op*, std::pair<Compiled, const hlo::Op*>> dot_out;  // + transpose
  std::unordered_set<const hlo::Op*> absorbed;
};
StepFolds find_step_folds(const hlo::Block& b) {
  StepFolds r;
  std::unordered_map<const hlo::Value*, int> uses;
  hlo::walk(b, [&](const hlo::Op& o) {
    for (auto* v : o.operands) ++uses[v];
  });
  const bool dot_fold = !env_on("NETSPEC_NO_DOT_FOLD");
  for (const auto& up : b.ops) {
    const hlo::Op& op = *up;
    if (dot_fold && op.kind == OpKind::kTranspose && op.operands.size() == 1) {
      const hlo::Op* dot = op.operand(0)->def;
      if (dot && dot->kind == OpKind::kDotGeneral && dot->parent == &b &&
          uses[op.operand(0)] == 1 && all_tensors(op))
        if (auto c = compile_dot_transposed_out(*dot, op.attrs.get_i64s("permutation"))) {
          r.dot_out.emplace(dot, std::make_pair(std::move(*c), &op));
          r.absorbed.insert(&op);
        }
      continue;
    }
    if (op.kind != OpKind::kConvolution || op.operands.size() != 2) continue;
    if (uses[op.operand(1)] != 1 || !all_tensors(op)) continue;
    if (auto c = compile_conv_rhs_reversed(op)) {  // nullopt unless operand 1 is a reverse
      r.conv_rev.emplace(&op, std::move(*c));
      r.absorbed.insert(op.operand(1)->def);
    }
  }
  return r;
}

// " {blocked nChw16c}" for a step that reads or writes the blocked layout (profile labels).
std::string blocked_label(const Plan& P, const Step& st) {
  for (int id : st.outs)
    if (P.vals[static_cast<size_t>(id)].block) return fmt::format(" {{nChw{}c}}", P.chan_block);
  for (int id : st.ins)
    if (id >= 0 && P.vals[static_cast<size_t>(id)].block)
      return fmt::format(" {{nChw{}c}}", P.chan_block);
  return "";
}

// The reduce op of P's own block that is the only reader of v outside group g, or null.
const hlo::Op* sole_reduce_reader(const Plan& P, const FusedGroup& g, const hlo::Value* v) {
  int uses = 0;
  hlo::walk(*P.block, [&](const hlo::Op& o) {
    if (std::find(g.ops.begin(), g.ops.end(), &o) != g.ops.end()) return;
    for (auto* u : o.operands) uses += u == v;
  });
  if (uses != 1) return nullptr;
  for (const auto& o : P.block->ops)
    if (o->kind == OpKind::kReduce && o->operands.size() == 2 && o->operand(0) == v) return o.get();
  return nullptr;
}

// Folds the sums over (N?, H, W) that are the only readers of some outputs of blocked group g
// into its step (compile_fused_reduce): those outputs are never written. False when none
// qualifies (NETSPEC_NO_REDUCE_FUSION=1: never).
bool add_fused_reduce_step(Plan& P, const hlo::Op& op, const FusedGroup& g, Step& st) {
  if (env_on("NETSPEC_NO_REDUCE_FUSION")) return false;
  std::vector<std::optional<float>> init(g.outs.size());
  std::vector<const hlo::Op*> red(g.outs.size(), nullptr);
  std::optional<bool> over_n;
  for (size_t k = 0; k < g.outs.size(); ++k) {
    const hlo::Op* r = sole_reduce_reader(P, g, g.outs[k]);
    auto si = r ? blocked_sum_init(*r, P.chan_block) : std::nullopt;
    if (!si || (over_n && *over_n != si->second)) continue;
    over_n = si->second;
    init[k] = si->first;
    red[k] = r;
  }
  if (!over_n) return false;
  // The folded step runs one task per channel block (per sample too without N): with fewer
  // tasks than threads the unfused group (split over all threads) is the faster choice.
  const hlo::Type& dom = g.ops.back()->result(0)->type;
  const int64_t tasks = dom.dim(1) / P.chan_block * (*over_n ? 1 : dom.dim(0));
  if (tasks < ThreadPool::global().num_threads()) return false;
  auto c = compile_fused_reduce(g, P.chan_block, init, *over_n);
  if (!c) return false;
  for (size_t k = 0; k < g.outs.size(); ++k)
    if (!red[k]) {
      st.outs.push_back(new_val(P, g.outs[k]));
      P.vals[static_cast<size_t>(st.outs.back())].block = P.chan_block;
      ++P.stats.blocked_values;
    }
  for (size_t k = 0; k < g.outs.size(); ++k)
    if (red[k]) {
      st.outs.push_back(new_val(P, red[k]->result(0)));
      st.fused_reduces.push_back(red[k]);
      P.absorbed_reduces.insert(red[k]);
      ++P.stats.fused_sums;
    }
  st.compiled = std::move(*c);
  if (P.profile) st.label = fused_label(g, op) + " +sums" + blocked_label(P, st);
  P.steps.push_back(std::move(st));
  return true;
}

// Folds the row reductions (row_fold_of) of outputs of plain group g into its step
// (compile_fused_rows): a reduce of P's block over an output's trailing dims with a constant init
// runs on the group's tiles; the output is still written when it has readers besides the reduce.
// All folded reduces share one row length. False when none qualifies (NETSPEC_NO_REDUCE_FUSION=1:
// never).
bool add_fused_row_step(Plan& P, const hlo::Op& op, const FusedGroup& g, Step& st) {
  if (env_on("NETSPEC_NO_REDUCE_FUSION")) return false;
  std::vector<std::optional<RowFold>> folds(g.outs.size());
  std::vector<const hlo::Op*> red(g.outs.size(), nullptr);
  int64_t row = 0;
  for (size_t k = 0; k < g.outs.size(); ++k) {
    const hlo::Value* v = g.outs[k];
    const hlo::Op* r = nullptr;
    for (const auto& o : P.block->ops)
      if (o->kind == OpKind::kReduce && o->operands.size() == 2 && o->operand(0) == v &&
          !P.absorbed_reduces.count(o.get())) {
        r = o.get();
        break;
      }
    if (!r) continue;
    const auto rf = row_fold_of(*r);
    const std::optional<float> init = scalar_constant(*r->operand(1));
    if (!rf || !init || (row && rf->second != row)) continue;
    int uses = 0;
    hlo::walk(*P.block, [&](const hlo::Op& o) {
      if (std::find(g.ops.begin(), g.ops.end(), &o) != g.ops.end()) return;
      for (auto* u : o.operands) uses += u == v;
    });
    row = rf->second;
    folds[k] = RowFold{rf->first, *init, uses > 1};
    red[k] = r;
  }
  if (!row) return false;
  auto c = compile_fused_rows(g, folds, row);
  if (!c) return false;
  for (size_t k = 0; k < g.outs.size(); ++k)
    if (!folds[k] || folds[k]->written) {
      st.outs.push_back(new_val(P, g.outs[k]));
      if (folds[k]) st.reduced_and_written.push_back(g.outs[k]);
    }
  for (size_t k = 0; k < g.outs.size(); ++k)
    if (red[k]) {
      st.outs.push_back(new_val(P, red[k]->result(0)));
      st.fused_reduces.push_back(red[k]);
      P.absorbed_reduces.insert(red[k]);
      ++P.stats.fused_row_reduces;
    }
  st.compiled = std::move(*c);
  if (P.profile) st.label = fused_label(g, op) + " +row folds";
  P.steps.push_back(std::move(st));
  return true;
}

// The step of fused group g (it runs at its last op).
void add_fused_step(Plan& P, const hlo::Op& op, const FusedGroup& g) {
  if (fold_conv_affine(P, op, g)) return;
  Step st;
  st.op = &op;
  st.fused = &g;
  st.kind = StepKind::kFast;
  // Channel-blocked when its layout allows it and one full-shape input already is blocked.
  const Shape& dom = g.ops.back()->result(0)->type.shape();
  bool blocked = false;
  if (P.chan_block > 0 && fused_blockable(g, P.chan_block))
    for (const hlo::Value* v : g.ins) {
      int id = use_of(P, v);
      if (id >= 0 && v->type.shape() == dom && (P.vals[id].block > 0 || P.blocked_copy.count(v)))
        blocked = true;
    }
  for (const hlo::Value* v : g.ins) {
    int id = blocked && v->type.shape() == dom ? want_blocked(P, v, op) : want_plain(P, v, op);
    if (id < 0 || P.vals[id].src == Src::kTuple)
      fail("cpu", "fusion group input {} has no value (planner bug)", v->type.str());
    st.ins.push_back(id);
  }
  if (blocked && add_fused_reduce_step(P, op, g, st)) return;
  if (!blocked && add_fused_row_step(P, op, g, st)) return;
  for (const hlo::Value* v : g.outs) {
    st.outs.push_back(new_val(P, v));
    if (blocked) {
      P.vals[static_cast<size_t>(st.outs.back())].block = P.chan_block;
      ++P.stats.blocked_values;
    }
  }
  st.compiled = compile_fused(g, blocked ? P.chan_block : 0);
  if (P.profile) st.label = fused_label(g, op) + blocked_label(P, st);
  P.steps.push_back(std::move(st));
}

// The step of one op: a folded convolution, the op's fast kernel, a view, or its ref kernel.
// Constants and iota are evaluated here instead. False: the function must run on ref.
bool add_op_step(Plan& P, const hlo::Op& op, StepFolds& folds) {
  const Compiler* table = compiler_table();
  Step st;
  st.op = &op;
  auto folded = folds.conv_rev.find(&op);
  if (folded != folds.conv_rev.end()) st.absorbed_reverse = op.operand(1)->def;
  if (!op.regions.empty() || op.kind == OpKind::kCall) plain_for_regions(P, op);
  if (add_blocked_step(P, op, st, table)) {
    if (P.profile) st.label = step_label(op, st.kind) + blocked_label(P, st);
    P.steps.push_back(std::move(st));
    return true;
  }
  bool tensors_only = true;
  for (auto* v : op.operands) {
    if (st.absorbed_reverse && st.ins.size() == 1) v = st.absorbed_reverse->operand(0);
    int id = want_plain(P, v, op);
    if (id < 0 || P.vals[id].src == Src::kTuple) tensors_only = false;
    st.ins.push_back(id);
  }
  for (const auto& r : op.results)
    if (!r->type.is_tensor()) tensors_only = false;
  if (!tensors_only && op.kind != OpKind::kAllReduce) return false;
  auto dot_out = folds.dot_out.find(&op);
  if (dot_out != folds.dot_out.end()) {  // the result exists only as the folded transpose's
    st.absorbed_transpose = dot_out->second.second;
    st.outs.push_back(new_val(P, st.absorbed_transpose->result(0)));
  } else {
    for (const auto& r : op.results) st.outs.push_back(new_val(P, r.get()));
  }
  // Ops without operands or regions (constant, iota) are evaluated once, here.
  if ((op.kind == OpKind::kConstant || op.kind == OpKind::kIota) && ref::kernel_for(op.kind)) {
    ref::RunContext ctx;
    std::vector<Tensor> out = ref::kernel_for(op.kind)(op, {}, ctx);
    P.vals[st.outs[0]].src = Src::kConst;
    P.vals[st.outs[0]].constant = std::move(out.at(0));
    return true;
  }
  std::optional<Compiled> c;
  if (folded != folds.conv_rev.end()) {
    c = std::move(folded->second);
  } else if (dot_out != folds.dot_out.end()) {
    c = std::move(dot_out->second.first);
  } else if (Compiler comp = table[static_cast<size_t>(op.kind)]; comp && all_tensors(op)) {
    c = comp(op);
  }
  if (c) {
    st.kind = c->view ? StepKind::kView : StepKind::kFast;
    st.compiled = std::move(*c);
  } else if ((!op.regions.empty() || op.kind == OpKind::kCall) && plan_regions(P, op, st)) {
    st.kind = StepKind::kRegion;
  } else {
    st.kind = StepKind::kRef;
    st.ref_kernel = ref::kernel_for(op.kind);
  }
  if (P.profile)
    st.label = step_label(op, st.kind) + (st.absorbed_transpose ? " {writes its transpose}" : "");
  P.steps.push_back(std::move(st));
  return true;
}

// One step per op of f's body (tuples resolved to their elements, fused members skipped until
// their group's last op). False: something only ref can run (tuple-typed values).
bool plan_steps(Plan& P, const hlo::Block& b) {
  StepFolds folds = find_step_folds(b);
  for (const auto& up : b.ops) {
    const hlo::Op& op = *up;
    if (folds.absorbed.count(&op)) continue;
    if (op.kind == OpKind::kFuncReturn || op.kind == OpKind::kReturn) {
      bool ok = true;
      for (auto* v : op.operands) {
        int id = want_plain(P, v, op);
        if (id < 0 || P.vals[id].src == Src::kTuple) ok = false;
        P.results.push_back(id);
      }
      return ok;
    }
    if (op.kind == OpKind::kTuple) {
      int id = new_val(P, op.result());
      P.vals[id].src = Src::kTuple;
      for (auto* v : op.operands) {
        int e = want_plain(P, v, op);
        P.vals[id].tuple_elems.push_back(e);
      }
      continue;
    }
    if (op.kind == OpKind::kGetTupleElement) {
      int t = id_of(P, op.operand(0));
      int64_t idx = op.attrs.get_int_or("index", -1);
      if (t < 0 || P.vals[t].src != Src::kTuple || idx < 0 ||
          idx >= static_cast<int64_t>(P.vals[t].tuple_elems.size()))
        return false;
      P.ids[op.result()] = P.vals[t].tuple_elems[static_cast<size_t>(idx)];
      continue;
    }
    if (P.fusion.skip_bcast.count(&op) || P.absorbed_reduces.count(&op)) continue;
    if (auto mem = P.fusion.member_of.find(&op); mem != P.fusion.member_of.end()) {
      const size_t gi = static_cast<size_t>(mem->second);
      if (P.fusion.last_op_of[gi] == &op) add_fused_step(P, op, P.fusion.groups[gi]);
      continue;
    }
    if (!add_op_step(P, op, folds)) return false;
  }
  return true;
}

// Liveness: last step that reads each value (uses inside regions count for the owning step).
void plan_liveness(Plan& P) {
  const int n_steps = static_cast<int>(P.steps.size());
  for (int s = 0; s < n_steps; ++s) {
    Step& st = P.steps[static_cast<size_t>(s)];
    auto use = [&](int id) {
      if (id < 0) return;
      P.vals[id].last_use = std::max(P.vals[id].last_use, s);
      for (int e : P.vals[id].tuple_elems) P.vals[e].last_use = std::max(P.vals[e].last_use, s);
    };
    for (int id : st.ins) use(id);
    for (const auto& r : st.op->regions)
      hlo::walk(*r, [&](const hlo::Op& inner) {
        for (auto* v : inner.operands) use(id_of(P, v));
      });
  }
  for (int id : P.results) P.vals[id].last_use = n_steps;
}

// A result of pointwise step s takes over the buffer of an operand that dies at s (same byte
// size, not in the kernel's no_alias list); false if none can be claimed.
bool claim_operand_buffer(Plan& P, const Step& st, int s, ValInfo& R, size_t bytes, int end,
                          std::vector<int>& claimed) {
  for (size_t oi = 0; oi < st.ins.size(); ++oi) {
    const int o = st.ins[oi];
    const auto& na = st.compiled.no_alias;
    if (std::find(na.begin(), na.end(), static_cast<int>(oi)) != na.end()) continue;
    const ValInfo& O = P.vals[o];
    bool owns = O.src == Src::kBuffer || (O.src == Src::kView && O.buffer >= 0);
    if (!owns || type_bytes(O.type) != bytes) continue;
    Buffer& b = P.buffers[static_cast<size_t>(O.buffer)];
    if (b.end != s || std::count(claimed.begin(), claimed.end(), O.buffer)) continue;
    // Another operand reading the same buffer through a view (a slice at an offset, a
    // broadcast reshape) would see the result's writes at other positions than its own.
    bool shared = false;
    for (int other : st.ins)
      shared = shared || (other >= 0 && other != o && P.vals[other].buffer == O.buffer &&
                          (P.vals[other].src == Src::kView || O.src == Src::kView));
    if (shared) continue;
    R.buffer = O.buffer;
    b.end = end;
    claimed.push_back(O.buffer);
    ++P.stats.inplace;
    return true;
  }
  return false;
}

// The value a view (or a view of a view) reads its storage from; id itself when not a view.
int view_root(const Plan& P, int id) {
  while (id >= 0 && P.vals[static_cast<size_t>(id)].src == Src::kView)
    id = P.vals[static_cast<size_t>(id)].view_of;
  return id;
}

// Is some view (or view of a view) of value `a` planned so far still read at step s or later?
// It would see a write into a at s. (A view read only before s is done with a's old contents.)
bool has_live_view(const Plan& P, int a, int s) {
  for (const ValInfo& V : P.vals)
    if (V.src == Src::kView && V.last_use >= s && view_root(P, V.view_of) == a) return true;
  return false;
}

// In a while body, result k = dynamic_update_slice(argument k, ...) with argument k dying there
// writes the loop state in place: the result is bound to argument k's storage (the while step's
// state slot), so neither the kernel's copy of the operand nor the copy back after the iteration
// happens. (Flash attention's gradient blocks written into their [T, dh] accumulators.)
bool loop_state_in_place(Plan& P, const Step& st, int s, int r) {
  const hlo::Op* owner = P.block ? P.block->parent_op : nullptr;
  if (st.op->kind != OpKind::kDynamicUpdateSlice || !owner || owner->kind != OpKind::kWhile ||
      owner->regions.size() != 2 || P.block != owner->region(1))
    return false;
  const int a = st.ins[0];
  const ValInfo& A = P.vals[a];
  if (A.src != Src::kArg || A.last_use != s || A.arg < 0 ||
      A.arg >= static_cast<int>(P.results.size()) || P.results[static_cast<size_t>(A.arg)] != r ||
      std::count(P.results.begin(), P.results.end(), r) != 1)
    return false;
  if (has_live_view(P, a, s)) return false;
  P.vals[r].src = Src::kArg;
  P.vals[r].arg = A.arg;
  ++P.stats.inplace;
  return true;
}

// In a while body, result k of pointwise step s (a fused group's output included) is written
// into argument k's storage, the while step's state slot, when argument k dies at s as one of
// the step's operands and no view of it is read at s or later: the step reads each element of
// the old state before writing that element, and the copy back after the iteration is skipped.
// (Mamba's scan state h_t = exp(Δ_t A) ⊙ h_{t-1} + ...: 512 KiB a step was copied back.)
bool loop_carry_in_place(Plan& P, const Step& st, int s, int r) {
  const hlo::Op* owner = P.block ? P.block->parent_op : nullptr;
  if (!owner || owner->kind != OpKind::kWhile || owner->regions.size() != 2 ||
      P.block != owner->region(1) || std::count(P.results.begin(), P.results.end(), r) != 1)
    return false;
  const int k =
      static_cast<int>(std::find(P.results.begin(), P.results.end(), r) - P.results.begin());
  const auto& na = st.compiled.no_alias;
  for (size_t oi = 0; oi < st.ins.size(); ++oi) {
    const int a = st.ins[oi];
    if (a < 0 || std::find(na.begin(), na.end(), static_cast<int>(oi)) != na.end()) continue;
    const ValInfo& A = P.vals[static_cast<size_t>(a)];
    if (A.src != Src::kArg || A.arg != k || A.last_use != s ||
        type_bytes(A.type) != type_bytes(P.vals[static_cast<size_t>(r)].type) ||
        has_live_view(P, a, s))
      continue;
    P.vals[static_cast<size_t>(r)].src = Src::kArg;
    P.vals[static_cast<size_t>(r)].arg = k;
    ++P.stats.inplace;
    return true;
  }
  return false;
}

// Does a region of step st read a value stored in `buffer` (the value itself or a view of it,
// captured from the enclosing scope)?
bool regions_read_buffer(const Plan& P, const Step& st, int buffer) {
  bool reads = false;
  for (const auto& r : st.op->regions)
    hlo::walk(*r, [&](const hlo::Op& inner) {
      for (const hlo::Value* v : inner.operands) {
        const int id = id_of(P, v);
        reads = reads || (id >= 0 && P.vals[static_cast<size_t>(id)].buffer == buffer);
      }
    });
  return reads;
}

// A while's state slot i takes the buffer of its initial value i when that value dies at the
// loop (nothing reads it, or a view of it, later; the loop's regions do not capture it, since
// they would see the state's writes) and is passed once: the loop starts on it in place
// instead of copying it in (mamba-lm's [T, B, di, N] state stack: 64 MiB a block).
bool while_state_takes_init(Plan& P, const Step& st, int s, int i, ValInfo& R, size_t bytes,
                            int end) {
  if (st.kind != StepKind::kRegion || st.op->kind != OpKind::kWhile ||
      static_cast<size_t>(i) >= st.ins.size())
    return false;
  const int o = st.ins[static_cast<size_t>(i)];
  if (o < 0 || std::count(st.ins.begin(), st.ins.end(), o) != 1) return false;
  const ValInfo& O = P.vals[static_cast<size_t>(o)];
  if (O.src != Src::kBuffer || O.buffer < 0 || type_bytes(O.type) != bytes) return false;
  Buffer& b = P.buffers[static_cast<size_t>(O.buffer)];
  if (b.end != s || has_live_view(P, o, s) || regions_read_buffer(P, st, O.buffer)) return false;
  R.buffer = O.buffer;
  b.end = end;
  ++P.stats.inplace;
  // A filled value (a broadcast: mamba's zero state stack, 64 MiB a block) that the loop
  // overwrites whole before reading it, and that nothing else reads between its fill and the
  // loop (a step reading it, or a view of it, directly or from a region), is not filled at all.
  if (hlo::state_written_whole_unread(*st.op, static_cast<size_t>(i)))
    for (int p = s - 1; p >= 0; --p) {
      Step& prod = P.steps[static_cast<size_t>(p)];
      if (std::find(prod.outs.begin(), prod.outs.end(), o) == prod.outs.end()) {
        for (int in : prod.ins)
          if (in >= 0 && P.vals[static_cast<size_t>(in)].buffer == O.buffer) return true;
        if (regions_read_buffer(P, prod, O.buffer)) return true;
        continue;
      }
      if (prod.kind == StepKind::kFast && prod.outs.size() == 1 &&
          prod.op->kind == OpKind::kBroadcastInDim) {
        prod.skip = true;
        ++P.stats.unfilled_states;
      }
      break;
    }
  return true;
}

// A function result of pointwise step s written into the storage of a donated argument that
// dies at s (same type; XLA's buffer donation): a training step's parameters and optimizer
// state are updated in place instead of into fresh memory, which saves the write-allocate
// reads of the new pages and halves the state's working set. Not when the argument is itself
// a result or read through a view. `taken`: the arguments this step's outputs already took.
bool claim_donated_arg(Plan& P, const Step& st, int s, int r, std::vector<int>& taken) {
  if (P.sub || P.donated.empty() || P.vals[r].block != 0 ||
      std::count(P.results.begin(), P.results.end(), r) == 0)
    return false;
  const auto& na = st.compiled.no_alias;
  for (size_t oi = 0; oi < st.ins.size(); ++oi) {
    if (std::find(na.begin(), na.end(), static_cast<int>(oi)) != na.end()) continue;
    const int a = st.ins[oi];
    const ValInfo& A = P.vals[a];
    if (A.src != Src::kArg || A.arg < 0 || static_cast<size_t>(A.arg) >= P.donated.size() ||
        !P.donated[static_cast<size_t>(A.arg)] || A.last_use != s || A.block != 0 ||
        !(A.type == P.vals[r].type) || std::count(taken.begin(), taken.end(), A.arg))
      continue;
    if (has_live_view(P, a, s)) continue;
    P.vals[r].src = Src::kArg;
    P.vals[r].arg = A.arg;
    taken.push_back(A.arg);
    P.donated_args.push_back(A.arg);
    ++P.stats.donated;
    return true;
  }
  return false;
}

// Buffers, with in-place reuse of a dying operand's buffer for pointwise kernels; function
// results get fresh per-run storage (or a donated argument's); non-arena values are released
// after their last use.
void plan_buffers(Plan& P) {
  const int n_steps = static_cast<int>(P.steps.size());
  for (int s = 0; s < n_steps; ++s) {
    Step& st = P.steps[static_cast<size_t>(s)];
    ++P.stats.steps;
    if (st.kind == StepKind::kRef) {
      ++P.stats.ref_steps;
      std::string name(op_mnemonic(st.op->kind));
      if (P.stats.fallback_ops.find(name) == std::string::npos)
        P.stats.fallback_ops += (P.stats.fallback_ops.empty() ? "" : ",") + name;
      continue;  // results are kDynamic
    }
    ++P.stats.fast_steps;
    if (st.compiled.winograd) ++P.stats.winograd_convs;
    if (st.compiled.padded_dot) ++P.stats.padded_dots;
    if (st.compiled.split_dot) ++P.stats.split_dots;
    P.stats.fused_chains += st.compiled.chained_pairs;
    P.stats.fused_bcasts += st.compiled.folded_broadcasts;
    P.stats.fused_generated += st.compiled.generated_instructions;
    // A slice view returned from the function stays a copy: a region's results are copied into
    // its state slots one by one, and a view could read a slot already overwritten.
    if (st.kind == StepKind::kView && st.compiled.view_offset &&
        std::count(P.results.begin(), P.results.end(), st.outs[0]))
      st.kind = StepKind::kFast;
    if (st.kind == StepKind::kView) {
      int r = st.outs[0], src = st.ins[0];
      P.vals[r].src = Src::kView;
      P.vals[r].view_of = src;
      ++P.stats.views;
      // A view (also a view of a view) keeps its root's arena buffer alive while it is live.
      const ValInfo& S = P.vals[src];
      if (S.src == Src::kBuffer || (S.src == Src::kView && S.buffer >= 0)) {
        P.vals[r].buffer = S.buffer;
        Buffer& b = P.buffers[static_cast<size_t>(P.vals[src].buffer)];
        b.end = std::max(b.end, std::max(P.vals[r].last_use, s));
      }
      continue;
    }
    std::vector<int> claimed, taken;
    if (st.outs.size() == 1 && st.compiled.scratch_bytes == 0 &&
        loop_state_in_place(P, st, s, st.outs[0]))
      continue;
    for (size_t oi = 0; oi < st.outs.size(); ++oi) {
      const int r = st.outs[oi];
      if (st.compiled.pointwise && loop_carry_in_place(P, st, s, r)) continue;
      if (st.compiled.pointwise && claim_donated_arg(P, st, s, r, taken)) continue;
      ValInfo& R = P.vals[r];
      R.src = Src::kBuffer;
      size_t bytes = type_bytes(R.type);
      P.stats.value_bytes += bytes;
      int end = std::max(R.last_use, s);
      if (st.compiled.pointwise && bytes > 0)
        claim_operand_buffer(P, st, s, R, bytes, end, claimed);
      if (R.buffer < 0 && bytes > 0)
        while_state_takes_init(P, st, s, static_cast<int>(oi), R, bytes, end);
      if (R.buffer < 0) {
        R.buffer = static_cast<int>(P.buffers.size());
        P.buffers.push_back({bytes, s, end, bytes == 0, 0});
      }
    }
    if (st.compiled.scratch_bytes > 0) {
      st.scratch = static_cast<int>(P.buffers.size());
      P.buffers.push_back({st.compiled.scratch_bytes, s, s, false, 0});
    }
  }
  for (int id : P.results) {
    const int v = view_root(P, id);
    if (P.vals[v].src == Src::kBuffer && !P.sub)
      P.buffers[static_cast<size_t>(P.vals[v].buffer)].fresh = true;
  }
  // Non-arena values are dropped after their last use so their memory goes early.
  for (size_t id = 0; id < P.vals.size(); ++id) {
    const ValInfo& V = P.vals[id];
    if ((V.src == Src::kDynamic || V.src == Src::kView || V.src == Src::kCapture) &&
        V.last_use >= 0 && V.last_use < n_steps)
      P.steps[static_cast<size_t>(V.last_use)].release.push_back(static_cast<int>(id));
  }
}

// First-fit offsets for arena buffers, largest first; buffers whose [start, end] intervals
// overlap never share bytes.
size_t assign_offsets(std::vector<Buffer>& bufs) {
  std::vector<int> order;
  for (size_t i = 0; i < bufs.size(); ++i)
    if (!bufs[i].fresh && bufs[i].bytes > 0) order.push_back(static_cast<int>(i));
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return bufs[a].bytes > bufs[b].bytes; });
  std::vector<int> placed;
  size_t total = 0;
  for (int b : order) {
    Buffer& B = bufs[b];
    std::vector<std::pair<size_t, size_t>> busy;  // [offset, offset + size)
    for (int p : placed) {
      const Buffer& P = bufs[p];
      if (P.start <= B.end && B.start <= P.end)
        busy.push_back({P.offset, P.offset + align_up(P.bytes)});
    }
    std::sort(busy.begin(), busy.end());
    size_t off = 0, need = align_up(B.bytes);
    for (auto [lo, hi] : busy) {
      if (off + need <= lo) break;
      off = std::max(off, hi);
    }
    B.offset = off;
    total = std::max(total, off + need);
    placed.push_back(b);
  }
  return total;
}

}  // namespace

int add_val(Plan& P, const hlo::Type& t) {
  P.vals.push_back({});
  P.vals.back().type = t;
  return static_cast<int>(P.vals.size()) - 1;
}
int new_val(Plan& P, const hlo::Value* v) {
  int id = add_val(P, v->type);
  P.ids[v] = id;
  return id;
}
int use_of(Plan& P, const hlo::Value* v) {
  int id = id_of(P, v);
  if (id >= 0 || !P.sub || !v->type.is_tensor()) return id;
  id = new_val(P, v);
  P.vals[id].src = Src::kCapture;
  P.vals[id].capture = v;
  P.captures.push_back(id);
  return id;
}

std::unique_ptr<Plan> build_plan(const hlo::Func& f, const std::vector<bool>& donated) {
  // On a copy, since the module is shared and the other backends schedule memory and layouts
  // themselves: inline calls (a callee's values share the caller's arena, its results are not
  // copied out: a custom VJP's forward keeping states for its backward, mamba's), recompute
  // cheap forward values near their backward uses (smaller arena), let dots read transposed
  // operands through strides (no transposed copy), compute slices of a product as products (no
  // slice copies), and run bf16 convolutions as f32 ones where the CPU has no bf16 kernels.
  const bool remat = !env_on("NETSPEC_NO_REMAT"), dot_fold = !env_on("NETSPEC_NO_DOT_FOLD");
  const bool widen = bf16_widened_convolutions(), sink = !env_on("NETSPEC_NO_SLICE_SINK");
  const bool inline_calls = !env_on("NETSPEC_NO_INLINE");
  if (f.module && (remat || dot_fold || widen || sink || inline_calls)) {
    auto copy = hlo::clone_module(*f.module);
    hlo::Func* g = copy->find(f.name);
    if (g) {
      const int inlined = inline_calls ? hlo::inline_calls(*g) : 0;
      const int widened = widen ? hlo::widen_bf16_convolutions(*g) : 0;
      const int sunk = sink ? hlo::sink_slices(*g) : 0;
      const int folded = dot_fold ? hlo::fold_transposes_into_dots(*g) : 0;
      const int n = remat ? hlo::rematerialize(*g->body) : 0;
      if (n > 0 || folded > 0 || widened > 0 || sunk > 0 || inlined > 0) {
        auto plan = build_block_plan(*g->body, nullptr, donated);
        plan->func = g;
        plan->stats.calls_inlined = inlined;
        plan->stats.remat_clones = n;
        plan->stats.dot_transposes_folded = folded;
        plan->stats.bf16_convolutions_widened = widened;
        plan->stats.slices_sunk = sunk;
        plan->remat_module = std::move(copy);
        return plan;
      }
    }
  }
  auto plan = build_block_plan(*f.body, nullptr, donated);
  plan->func = &f;
  return plan;
}

std::unique_ptr<Plan> build_block_plan(const hlo::Block& b, const Plan* parent,
                                       const std::vector<bool>& donated) {
  auto plan = std::make_unique<Plan>();
  Plan& P = *plan;
  P.block = &b;
  P.sub = parent != nullptr;
  if (!P.sub && std::find(donated.begin(), donated.end(), true) != donated.end())
    P.donated = donated;
  P.check = env_on("NETSPEC_CPU_CHECK");
  P.profile = env_on("NETSPEC_PROFILE");
  P.chan_block = layout_block_size();
  for (size_t i = 0; i < b.args.size(); ++i) {
    int id = new_val(P, b.arg(i));
    P.vals[id].src = Src::kArg;
    P.vals[id].arg = static_cast<int>(i);
  }
  if (!env_on("NETSPEC_NO_FUSION")) P.fusion = find_fusion_groups(b);
  if (!plan_steps(P, b)) {
    P.whole_on_ref = true;
    P.stats.whole_function_on_ref = true;
    return plan;
  }
  plan_liveness(P);
  plan_buffers(P);
  P.prof_ms.assign(P.steps.size(), 0.0);
  P.arena_bytes = assign_offsets(P.buffers);
  P.stats.arena_bytes = P.arena_bytes;
  // Regions' steps and arenas count as this plan's (a run holds every sub-plan's arena).
  for (const auto& sp : P.subplans) {
    const PlanStats& s = sp->stats;
    P.stats.add(s);
    if (!s.fallback_ops.empty() && P.stats.fallback_ops.find(s.fallback_ops) == std::string::npos)
      P.stats.fallback_ops += (P.stats.fallback_ops.empty() ? "" : ",") + s.fallback_ops;
  }
  return plan;
}

PlanStats plan_stats(const hlo::Func& f, const std::vector<bool>& donated) {
  return build_plan(f, donated)->stats;
}

}  // namespace netspec::exec::cpu
