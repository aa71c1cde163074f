// Eval BatchNorm (+ ReLU) folded into the convolution before it. A fused group that is exactly
// y * bcast(s) + bcast(t) (then maximum with a splat 0), where y is a convolution's result read
// by nothing else, runs as that convolution with oneDNN post-ops (binary mul, binary add,
// eltwise relu): the activation is written once instead of written, read and written again.
// A train step's forward also reads y for the batch statistics, so only eval / inference
// forwards fold. Check mode runs the conv's and the group's ref kernels (check.cpp).
#include <algorithm>
#include <cstdlib>

#include "exec/cpu/plan/plan.h"

namespace netspec::exec::cpu {
namespace {

using hlo::OpKind;
using hlo::Value;

bool member(const FusedGroup& g, const hlo::Op* op) {
  return op && std::find(g.ops.begin(), g.ops.end(), op) != g.ops.end();
}

// The [C] operand of a channel broadcast in g (dims = [1]), or null.
const Value* channel_source(const FusedGroup& g, const Value* v, int64_t C) {
  const hlo::Op* b = v->def;
  if (!member(g, b) || b->kind != OpKind::kBroadcastInDim) return nullptr;
  if (b->operand_type(0).shape() != Shape{C} ||
      i64s_attr(*b, "broadcast_dimensions") != hlo::I64s{1})
    return nullptr;
  return b->operand(0);
}

// v is g's broadcast of a scalar constant 0.
bool zero_splat(const Plan& P, const FusedGroup& g, const Value* v) {
  const hlo::Op* b = v->def;
  if (!member(g, b) || b->kind != OpKind::kBroadcastInDim || b->operand_type(0).numel() != 1)
    return false;
  auto it = P.ids.find(b->operand(0));
  if (it == P.ids.end()) return false;
  const ValInfo& V = P.vals[static_cast<size_t>(it->second)];
  return V.src == Src::kConst && V.constant.numel() == 1 && V.constant.as_double(0) == 0.0;
}

// The other operand of binary op when one of them is `v` (null if neither is).
const Value* other(const hlo::Op& op, const Value* v) {
  if (op.operands.size() != 2) return nullptr;
  return op.operand(0) == v ? op.operand(1) : op.operand(1) == v ? op.operand(0) : nullptr;
}

int uses_of(Plan& P, const Value* v) {
  if (P.use_count.empty())
    hlo::walk(*P.block, [&](const hlo::Op& o) {
      for (auto* u : o.operands) ++P.use_count[u];
    });
  auto it = P.use_count.find(v);
  return it == P.use_count.end() ? 0 : it->second;
}

}  // namespace

bool fold_conv_affine(Plan& P, const hlo::Op& last, const FusedGroup& g) {
  if (std::getenv("NETSPEC_NO_CONV_POSTOPS")) return false;
  std::vector<const hlo::Op*> ops;  // the non-broadcast members: multiply, add[, maximum]
  for (const hlo::Op* op : g.ops)
    if (op->kind != OpKind::kBroadcastInDim) ops.push_back(op);
  if (ops.size() < 2 || ops.size() > 3 || g.outs.size() != 1 || g.outs[0] != last.result(0))
    return false;
  const hlo::Op& mul = *ops[0];
  if (mul.kind != OpKind::kMultiply || ops[1]->kind != OpKind::kAdd) return false;
  // y: the multiply's operand produced by a convolution (not a group member).
  const Value* y = nullptr;
  for (auto* v : mul.operands)
    if (v->def && v->def->kind == OpKind::kConvolution) y = v;
  if (!y || y->type.shape().size() < 3 || uses_of(P, y) != 1) return false;
  const int64_t C = y->type.dim(1);
  const Value* s = channel_source(g, other(mul, y), C);
  const Value* t = channel_source(g, other(*ops[1], mul.result(0)), C);
  if (!s || !t) return false;
  const bool relu = ops.size() == 3;
  if (relu &&
      (ops[2]->kind != OpKind::kMaximum || !zero_splat(P, g, other(*ops[2], ops[1]->result(0)))))
    return false;
  // The conv's step: the last one producing y.
  const int yid = use_of(P, y);
  auto it = std::find_if(P.steps.rbegin(), P.steps.rend(), [&](const Step& st) {
    return st.op == y->def && st.outs.size() == 1 && st.outs[0] == yid;
  });
  if (it == P.steps.rend() || it->kind != StepKind::kFast || it->fused_conv) return false;
  ConvBlocks b;
  b.x = P.vals[static_cast<size_t>(it->ins[0])].block;
  b.y = blockable(P, last.result(0)->type) ? P.chan_block : 0;
  std::optional<Compiled> c =
      compile_conv_affine(*y->def, it->absorbed_reverse != nullptr, b, relu);
  if (!c && b.y) {
    b.y = 0;
    c = compile_conv_affine(*y->def, it->absorbed_reverse != nullptr, b, relu);
  }
  if (!c) return false;
  Step st;
  st.op = y->def;
  st.fused = &g;
  st.fused_conv = y->def;
  st.absorbed_reverse = it->absorbed_reverse;
  st.kind = StepKind::kFast;
  st.ins = {it->ins[0], it->ins[1]};
  st.fold_ins = {s, t};
  for (const Value* v : g.ins)
    if (v != y && v != s && v != t) st.fold_ins.push_back(v);
  if (P.vals[static_cast<size_t>(yid)].block) --P.stats.blocked_values;
  P.steps.erase(std::next(it).base());  // the conv runs here instead, with its post-ops
  for (const Value* v : st.fold_ins) st.ins.push_back(want_plain(P, v, last));
  int out = new_val(P, last.result(0));
  P.vals[static_cast<size_t>(out)].block = b.y;
  if (b.y) ++P.stats.blocked_values;
  st.outs = {out};
  st.compiled = std::move(*c);
  if (P.profile) st.label = step_label(*y->def, st.kind) + (relu ? " +BN+ReLU" : " +BN");
  ++P.stats.conv_postops;
  P.steps.push_back(std::move(st));
  return true;
}

}  // namespace netspec::exec::cpu
