// Slices sunk into the op that produces their operand: slice(f(a, b)) = f(slice(a), slice(b)) for
// an elementwise f, slice(broadcast_in_dim(v)) = broadcast_in_dim(slice(v)), and a slice of a
// dot_general's result = the dot of its operands sliced along the dims the result's dims come
// from. Applied where slices are the producer's only readers and together read no more than it
// holds, so nothing is computed twice: attention's fused q/k/v projection, dot + bias then three
// slices, becomes three products writing q, k and v where they are read, without the [B, T, 3D]
// intermediate and its three slice copies.
#include <unordered_map>
#include <unordered_set>

#include "hlo/dims_fields.h"
#include "hlo/passes.h"

namespace netspec::hlo {
namespace {

struct Window {
  I64s start, limit;
};

bool unit_strides(const Op& s) {
  for (int64_t v : s.attrs.get_i64s("strides"))
    if (v != 1) return false;
  return true;
}

bool elementwise(OpKind k) {
  const std::string_view f = op_family(k);
  return f == "unary" || f == "binary";
}

// Every reader of each value, over the whole function (region uses included).
using Readers = std::unordered_map<const Value*, std::vector<const Op*>>;
void collect_readers(const Block& b, Readers& r) {
  for (const auto& op : b.ops) {
    for (const Value* v : op->operands) r[v].push_back(op.get());
    for (const auto& reg : op->regions) collect_readers(*reg, r);
  }
}

bool read_only_by(const Value* v, const Op& reader, const Readers& readers) {
  auto it = readers.find(v);
  if (it == readers.end()) return false;
  for (const Op* r : it->second)
    if (r != &reader) return false;
  return true;
}

// An elementwise op's slices only move the slicing onto its operands; worth it when each operand
// (but scalars) is a broadcast or a product read by this op alone, whose slices sink in turn.
bool operands_sink_too(const Op& p, const Readers& readers) {
  for (const Value* v : p.operands) {
    if (v->type.rank() == 0) continue;
    if (v->type.shape() != p.result(0)->type.shape() || !v->def) return false;
    const OpKind k = v->def->kind;
    if (k != OpKind::kBroadcastInDim && k != OpKind::kDotGeneral) return false;
    if (!read_only_by(v, p, readers)) return false;
  }
  return true;
}

Window window_of(const Op& s) {
  return {s.attrs.get_i64s("start_indices"), s.attrs.get_i64s("limit_indices")};
}
int64_t numel(const Window& w) {
  int64_t n = 1;
  for (size_t d = 0; d < w.start.size(); ++d) n *= w.limit[d] - w.start[d];
  return n;
}
void dot_windows(const Op& p, const Window& w, Window& lw, Window& rw);

// Can `p`'s slices take its place: one result of a kind this pass handles, read only by
// unit-stride slices in its own block that together read at most its elements? A product cut in
// several must give slices of >= min_product_slice elements each (small products waste the
// GEMM), and the operand parts the slices read (copies unless whole) must cost no more than
// what the rewrite saves.
bool sinkable(const Op& p, const Readers& readers, size_t min_product_slice) {
  if (p.results.size() != 1 || !p.regions.empty()) return false;
  const bool dot = p.kind == OpKind::kDotGeneral && p.operands.size() == 2;
  if (!dot && p.kind != OpKind::kBroadcastInDim && !elementwise(p.kind)) return false;
  if (elementwise(p.kind) && !operands_sink_too(p, readers)) return false;
  const Type& t = p.result(0)->type;
  auto it = readers.find(p.result(0));
  if (it == readers.end() || it->second.empty()) return false;
  int64_t read = 0, copied = 0;
  for (const Op* s : it->second) {
    if (s->kind != OpKind::kSlice || s->parent != p.parent || !unit_strides(*s)) return false;
    const int64_t n = s->result(0)->type.numel();
    if (dot) {
      if (it->second.size() > 1 && static_cast<size_t>(n) < min_product_slice) return false;
      Window lw, rw;
      dot_windows(p, window_of(*s), lw, rw);
      if (numel(lw) != p.operand_type(0).numel()) copied += numel(lw);
      if (numel(rw) != p.operand_type(1).numel()) copied += numel(rw);
    }
    read += n;
  }
  if (read > t.numel()) return false;
  if (!dot) return true;
  // The operand copies must cost no more than the slice copies they replace plus the products
  // no longer computed (K multiply-adds per unread result element).
  int64_t k = 1;
  for (int64_t d : p.attrs.get<DotDims>("dot_dimension_numbers").lhs_contracting)
    k *= p.operand_type(0).dim(d);
  return copied <= read + (t.numel() - read) * k;
}

// slice(x) over `w` (x returned as is when w covers it).
Value* slice_of(Block& b, Value* x, const Window& w) {
  Shape shape;
  bool whole = true;
  for (size_t d = 0; d < w.start.size(); ++d) {
    shape.push_back(w.limit[d] - w.start[d]);
    whole = whole && w.start[d] == 0 && w.limit[d] == x->type.dim(static_cast<int64_t>(d));
  }
  if (whole) return x;
  Attrs a;
  a.set("start_indices", w.start);
  a.set("limit_indices", w.limit);
  a.set("strides", I64s(w.start.size(), 1));
  return append_op(&b, OpKind::kSlice, {x}, std::move(a), {x->type.with_shape(shape)})->result(0);
}

// The window of operand `x` of broadcast_in_dim `p` that result window `w` reads.
Window broadcast_window(const Op& p, const Window& w) {
  const Value* x = p.operand(0);
  const I64s& dims = p.attrs.get_i64s("broadcast_dimensions");
  Window v;
  for (size_t j = 0; j < dims.size(); ++j) {
    const auto d = static_cast<size_t>(dims[j]);
    const bool expanded = x->type.dim(static_cast<int64_t>(j)) == 1 &&
                          p.result(0)->type.dim(static_cast<int64_t>(d)) != 1;
    v.start.push_back(expanded ? 0 : w.start[d]);
    v.limit.push_back(expanded ? 1 : w.limit[d]);
  }
  return v;
}

// The windows of a dot's operands that result window `w` reads: result dims are the batch dims,
// then lhs's free dims, then rhs's, each in operand order; contracting dims stay whole.
void dot_windows(const Op& p, const Window& w, Window& lw, Window& rw) {
  const auto& dd = p.attrs.get<DotDims>("dot_dimension_numbers");
  const int64_t lr = p.operand_type(0).rank(), rr = p.operand_type(1).rank();
  auto whole = [](const Type& t, Window& o) {
    o.start.assign(static_cast<size_t>(t.rank()), 0);
    o.limit = t.shape();
  };
  whole(p.operand_type(0), lw);
  whole(p.operand_type(1), rw);
  size_t r = 0;
  for (size_t i = 0; i < dd.lhs_batching.size(); ++i, ++r) {
    const auto ld = static_cast<size_t>(dd.lhs_batching[i]);
    const auto rd = static_cast<size_t>(dd.rhs_batching[i]);
    lw.start[ld] = rw.start[rd] = w.start[r];
    lw.limit[ld] = rw.limit[rd] = w.limit[r];
  }
  for (int64_t d : free_dims(lr, dd.lhs_batching, dd.lhs_contracting)) {
    lw.start[static_cast<size_t>(d)] = w.start[r];
    lw.limit[static_cast<size_t>(d)] = w.limit[r++];
  }
  for (int64_t d : free_dims(rr, dd.rhs_batching, dd.rhs_contracting)) {
    rw.start[static_cast<size_t>(d)] = w.start[r];
    rw.limit[static_cast<size_t>(d)] = w.limit[r++];
  }
}

// Turns slice `s` of `p` in place into p's op over sliced operands (the slices go before it);
// s keeps its result value, so its readers need no change.
void sink(Block& b, Op& s, const Op& p) {
  const Window w = window_of(s);
  std::vector<Value*> ins;
  if (p.kind == OpKind::kDotGeneral) {
    Window lw, rw;
    dot_windows(p, w, lw, rw);
    ins = {slice_of(b, p.operand(0), lw), slice_of(b, p.operand(1), rw)};
  } else if (p.kind == OpKind::kBroadcastInDim) {
    ins = {slice_of(b, p.operand(0), broadcast_window(p, w))};
  } else {
    for (Value* v : p.operands) ins.push_back(v->type.rank() == 0 ? v : slice_of(b, v, w));
  }
  s.kind = p.kind;
  s.operands = std::move(ins);
  s.attrs = p.attrs;
}

// The producers whose slices sink this round, decided before any slice changes.
void find_sinkable(const Block& b, const Readers& readers, size_t min_product_slice,
                   std::unordered_set<const Op*>& out) {
  for (const auto& op : b.ops) {
    for (const auto& r : op->regions) find_sinkable(*r, readers, min_product_slice, out);
    if (sinkable(*op, readers, min_product_slice)) out.insert(op.get());
  }
}

int sink_block(Block& b, const std::unordered_set<const Op*>& producers) {
  int n = 0;
  for (auto& op : b.ops)
    for (auto& r : op->regions) n += sink_block(*r, producers);
  std::vector<std::unique_ptr<Op>> old = std::move(b.ops);
  b.ops.clear();
  for (auto& op : old) {
    if (op->kind == OpKind::kSlice) {
      const Op* p = op->operand(0)->def;
      if (p && producers.count(p)) {
        sink(b, *op, *p);
        ++n;
      }
    }
    b.ops.push_back(std::move(op));
  }
  return n;
}

}  // namespace

int sink_slices(Func& f, size_t min_product_slice) {
  int total = 0;
  for (int round = 0; round < 16; ++round) {  // one producer deeper per round
    Readers readers;
    collect_readers(*f.body, readers);
    std::unordered_set<const Op*> producers;
    find_sinkable(*f.body, readers, min_product_slice, producers);
    const int n = sink_block(*f.body, producers);
    if (n == 0) break;
    total += n;
    dce(f);
  }
  return total;
}

}  // namespace netspec::hlo
