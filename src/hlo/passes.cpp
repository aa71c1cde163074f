// Cleanup passes: DCE, CSE and identity folding (see passes.h).
#include "hlo/passes.h"

#include <algorithm>

#include <cstring>
#include <unordered_set>

namespace netspec::hlo {
namespace {

bool is_terminator(const Op& op) {
  return op.kind == OpKind::kReturn || op.kind == OpKind::kFuncReturn;
}

// Rewrites operands (recursively in regions) through `repl`.
void remap_operands(Op& op, const ValueMap& repl) {
  for (auto& v : op.operands) v = lookup(repl, v);
}

// ---------------------------------------------------------------------------------------------
// DCE: walk backwards; an op lives when it is a terminator or one of its results is used by a
// live op (uses inside regions count, so region bodies are processed before earlier ops).
bool dce_block(Block& b, std::unordered_set<const Value*>& used) {
  bool changed = false;
  std::vector<bool> keep(b.ops.size(), false);
  for (size_t k = b.ops.size(); k-- > 0;) {
    Op& op = *b.ops[k];
    bool live = is_terminator(op);
    for (const auto& r : op.results) live = live || used.count(r.get());
    if (!live) {
      changed = true;
      continue;
    }
    keep[k] = true;
    for (Value* v : op.operands) used.insert(v);
    for (auto& r : op.regions) changed |= dce_block(*r, used);
  }
  if (changed) {
    std::vector<std::unique_ptr<Op>> kept;
    for (size_t k = 0; k < b.ops.size(); ++k)
      if (keep[k]) kept.push_back(std::move(b.ops[k]));
    b.ops = std::move(kept);
  }
  return changed;
}

// ---------------------------------------------------------------------------------------------
// CSE. Two blocks are equivalent when their ops match one by one under the value mapping built
// so far (block args map positionally; values from enclosing scopes must be identical).
bool ops_equivalent(const Op& a, const Op& b, ValueMap& m);

bool blocks_equivalent(const Block& a, const Block& b, ValueMap& m) {
  if (a.args.size() != b.args.size() || a.ops.size() != b.ops.size()) return false;
  for (size_t i = 0; i < a.args.size(); ++i) {
    if (a.args[i]->type != b.args[i]->type) return false;
    m[a.args[i].get()] = b.args[i].get();
  }
  for (size_t i = 0; i < a.ops.size(); ++i)
    if (!ops_equivalent(*a.ops[i], *b.ops[i], m)) return false;
  return true;
}

bool ops_equivalent(const Op& a, const Op& b, ValueMap& m) {
  if (a.kind != b.kind || a.operands.size() != b.operands.size() ||
      a.results.size() != b.results.size() || a.regions.size() != b.regions.size())
    return false;
  for (size_t i = 0; i < a.operands.size(); ++i)
    if (lookup(m, a.operands[i]) != b.operands[i]) return false;
  for (size_t i = 0; i < a.results.size(); ++i)
    if (a.results[i]->type != b.results[i]->type) return false;
  if (!(a.attrs == b.attrs)) return false;
  for (size_t i = 0; i < a.regions.size(); ++i)
    if (!blocks_equivalent(*a.regions[i], *b.regions[i], m)) return false;
  for (size_t i = 0; i < a.results.size(); ++i) m[a.results[i].get()] = b.results[i].get();
  return true;
}

size_t op_hash(const Op& op) {
  size_t h = static_cast<size_t>(op.kind) * 1000003u;
  for (Value* v : op.operands) h = h * 31 + std::hash<const void*>()(v);
  h = h * 31 + op.results.size();
  h = h * 31 + op.regions.size();
  return h;
}

using CseTable = std::unordered_multimap<size_t, Op*>;

bool cse_block(Block& b, CseTable table, ValueMap& repl) {
  bool changed = false;
  for (auto& up : b.ops) {
    Op& op = *up;
    remap_operands(op, repl);
    for (auto& r : op.regions) changed |= cse_block(*r, table, repl);
    if (is_terminator(op)) continue;
    size_t h = op_hash(op);
    auto [lo, hi] = table.equal_range(h);
    bool merged = false;
    for (auto it = lo; it != hi; ++it) {
      ValueMap m;
      if (ops_equivalent(op, *it->second, m)) {
        for (size_t i = 0; i < op.results.size(); ++i) repl[op.result(i)] = it->second->result(i);
        merged = changed = true;
        break;
      }
    }
    if (!merged) table.emplace(h, &op);
  }
  return changed;
}

// ---------------------------------------------------------------------------------------------
// Folding.
const Tensor* constant_value(const Value* v) {
  if (!v->def || v->def->kind != OpKind::kConstant) return nullptr;
  auto* d = v->def->attrs.get_if<DenseAttr>("value");
  return d ? &d->value : nullptr;
}

// True when v is a constant whose every element equals x, or a broadcast of one.
bool is_splat_of(const Value* v, double x) {
  if (v->def && v->def->kind == OpKind::kBroadcastInDim) v = v->def->operand(0);
  const Tensor* t = constant_value(v);
  if (!t || (!is_float(t->dtype()) && !is_integer(t->dtype()))) return false;
  for (int64_t i = 0; i < t->numel(); ++i)
    if (t->as_double(i) != x) return false;
  return true;
}

bool is_splat(const Tensor& t) {
  for (int64_t i = 1; i < t.numel(); ++i)
    if (std::memcmp(static_cast<const uint8_t*>(t.raw()) + i * dtype_size(t.dtype()), t.raw(),
                    dtype_size(t.dtype())) != 0)
      return false;
  return t.numel() > 0;
}

// Turns `op` into a constant of its result type whose elements all equal element 0 of `t`.
void make_splat_constant(Op& op, const Tensor& t) {
  const Type& rt = op.result(0)->type;
  Tensor out(rt.dtype(), rt.shape());
  size_t es = dtype_size(rt.dtype());
  for (int64_t i = 0; i < out.numel(); ++i)
    std::memcpy(static_cast<uint8_t*>(out.raw()) + i * es, t.raw(), es);
  op.kind = OpKind::kConstant;
  op.operands.clear();
  op.attrs = Attrs{};
  op.attrs.set("value", DenseAttr{out});
}

constexpr int64_t kMaxFoldedSplat = 256;

// A zero pad (no interior padding, no negative edges) of `src` along one dim, at offset `lo`.
struct PadPiece {
  Value* src;
  int64_t lo;
};

// The pieces of v, an add tree of type t whose leaves are zero pads along dim d (d < 0: set by
// the first leaf); false when a node is neither (depth-bounded: adds chained past 64 stop it).
bool pad_pieces(Value* v, const Type& t, int64_t& d, std::vector<PadPiece>& out, int depth = 0) {
  Op* o = v->def;
  if (!o || depth > 64 || v->type != t) return false;
  if (o->kind == OpKind::kAdd)
    return pad_pieces(o->operand(0), t, d, out, depth + 1) &&
           pad_pieces(o->operand(1), t, d, out, depth + 1);
  if (o->kind != OpKind::kPad || !is_splat_of(o->operand(1), 0)) return false;
  const I64s& lo = o->attrs.get_i64s("edge_padding_low");
  const I64s& hi = o->attrs.get_i64s("edge_padding_high");
  const I64s& in = o->attrs.get_i64s("interior_padding");
  int64_t pd = -1;
  for (size_t k = 0; k < lo.size(); ++k) {
    if (in[k] != 0 || lo[k] < 0 || hi[k] < 0) return false;
    if (lo[k] == 0 && hi[k] == 0) continue;
    if (pd >= 0) return false;  // padded along two dims
    pd = static_cast<int64_t>(k);
  }
  if (pd < 0 || (d >= 0 && pd != d)) return false;
  d = pd;
  out.push_back({o->operand(0), lo[static_cast<size_t>(pd)]});
  return true;
}

// A sum of zero pads that tile one dim exactly is the concatenation of what they pad: the VJP of
// several slices of one value (attention's q, k, v from one projection) as one write instead of
// a pad per slice and their sums. Rewrites the add `op` into that concatenate (x + 0 = x, so
// the values are the same).
bool sum_of_pads_to_concat(Op& op) {
  const Type& t = op.result(0)->type;
  if (!t.is_tensor()) return false;
  int64_t d = -1;
  std::vector<PadPiece> pieces;
  if (!pad_pieces(op.operand(0), t, d, pieces) || !pad_pieces(op.operand(1), t, d, pieces))
    return false;
  std::sort(pieces.begin(), pieces.end(),
            [](const PadPiece& a, const PadPiece& b) { return a.lo < b.lo; });
  int64_t at = 0;
  for (const PadPiece& p : pieces) {
    if (p.lo != at) return false;  // a gap or an overlap
    at += p.src->type.shape()[static_cast<size_t>(d)];
  }
  if (at != t.shape()[static_cast<size_t>(d)]) return false;
  op.kind = OpKind::kConcatenate;
  op.operands.clear();
  for (const PadPiece& p : pieces) op.operands.push_back(p.src);
  op.attrs = Attrs{};
  op.attrs.set("dimension", IntAttr{d, DType::kI64});
  return true;
}

// Returns the value `op` folds to (nullptr: none). May rewrite `op` in place (returns nullptr
// and sets `changed`).
Value* fold_op(Op& op, bool& changed) {
  auto same_type = [&](Value* v) { return v->type == op.result(0)->type; };
  // x op unit = x, and unit op x = x when op commutes (the type must not change).
  auto drop_unit = [&](double unit, bool commutes) -> Value* {
    if (is_splat_of(op.operand(1), unit) && same_type(op.operand(0))) return op.operand(0);
    if (commutes && is_splat_of(op.operand(0), unit) && same_type(op.operand(1)))
      return op.operand(1);
    return nullptr;
  };
  switch (op.kind) {
    case OpKind::kAdd:
      if (Value* v = drop_unit(0, true)) return v;
      if (sum_of_pads_to_concat(op)) changed = true;
      break;
    case OpKind::kSubtract:
      return drop_unit(0, false);
    case OpKind::kMultiply:
      return drop_unit(1, true);
    case OpKind::kDivide:
      return drop_unit(1, false);
    case OpKind::kBroadcastInDim:
    case OpKind::kReshape: {
      // Fold into a literal only when that does not grow the module: a reshape, or a broadcast
      // to at most kMaxFoldedSplat elements (big splats stay scalar + broadcast_in_dim).
      const Tensor* t = constant_value(op.operand(0));
      bool small = op.kind == OpKind::kReshape || op.result(0)->type.numel() <= kMaxFoldedSplat;
      if (t && small && is_splat(*t)) {
        make_splat_constant(op, *t);
        changed = true;
        return nullptr;
      }
      if (op.kind == OpKind::kReshape) {
        if (same_type(op.operand(0))) return op.operand(0);
        Op* d = op.operand(0)->def;
        if (d && d->kind == OpKind::kReshape) {  // reshape(reshape(x)) = reshape(x)
          op.operands[0] = d->operand(0);
          changed = true;
        }
      }
      break;
    }
    case OpKind::kConvert:
      if (same_type(op.operand(0))) return op.operand(0);
      break;
    case OpKind::kTranspose: {
      I64s p = op.attrs.get_i64s("permutation");
      Op* d = op.operand(0)->def;
      if (d && d->kind == OpKind::kTranspose) {
        // transpose(transpose(x, p1), p2)[i] takes dim p1[p2[i]] of x.
        const I64s& p1 = d->attrs.get_i64s("permutation");
        I64s q(p.size());
        for (size_t i = 0; i < p.size(); ++i) q[i] = p1[static_cast<size_t>(p[i])];
        op.operands[0] = d->operand(0);
        op.attrs.set("permutation", q);
        p = q;
        changed = true;
      }
      bool identity = true;
      for (size_t i = 0; i < p.size(); ++i) identity = identity && p[i] == static_cast<int64_t>(i);
      if (identity && same_type(op.operand(0))) return op.operand(0);
      break;
    }
    default:
      break;
  }
  return nullptr;
}

bool fold_block(Block& b, ValueMap& repl) {
  bool changed = false;
  for (auto& up : b.ops) {
    Op& op = *up;
    remap_operands(op, repl);
    for (auto& r : op.regions) changed |= fold_block(*r, repl);
    if (op.results.size() != 1) continue;
    if (Value* v = fold_op(op, changed)) {
      repl[op.result(0)] = v;
      changed = true;
    }
  }
  return changed;
}

}  // namespace

bool dce(Func& f) {
  std::unordered_set<const Value*> used;
  return dce_block(*f.body, used);
}

bool cse(Func& f) {
  ValueMap repl;
  return cse_block(*f.body, CseTable{}, repl);
}

bool fold_identities(Func& f) {
  ValueMap repl;
  return fold_block(*f.body, repl);
}

void run_cleanup(Func& f) {
  for (int round = 0; round < 8; ++round) {
    bool changed = fold_identities(f);
    changed |= cse(f);
    changed |= dce(f);
    if (!changed) break;
  }
}

void run_cleanup(Module& m) {
  for (auto& f : m.funcs) run_cleanup(*f);
}

}  // namespace netspec::hlo
