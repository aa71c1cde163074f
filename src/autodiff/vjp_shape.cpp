// VJP rules of the shape / data-movement family: each backward moves dy back to where the
// forward took its elements from (reshape back, reduce over broadcast dims, pad a slice, ...).
#include <algorithm>

#include "autodiff/rules.h"
#include "hlo/op_families.h"
#include "hlo/op_family.h"

namespace netspec::autodiff {
namespace {

using hlo::I64s;
using hlo::OpKind;
using hlo::Value;
using V = std::vector<Value*>;

int64_t at(const I64s& v, size_t i) { return v.at(i); }

V reshape(VjpCtx& c) { return {c.b.reshape(c.dy[0], c.x(0)->type.shape())}; }  // dx = reshape(dy)

V transpose(VjpCtx& c) {  // dx = transpose(dy, p⁻¹)
  return {c.b.transpose(c.dy[0], inverse_permutation(c.op.attrs.get_i64s("permutation")))};
}

V reverse(VjpCtx& c) {  // dx = reverse(dy, dims)
  return {c.b.reverse(c.dy[0], c.op.attrs.get_i64s("dimensions"))};
}

// y = broadcast_in_dim(x, bd): dx = reshape(transpose(reduce_add(dy, dims not fed by x or fed by
// a size-1 dim of x))) — a reduce, never a dense Jacobian.
V broadcast_in_dim(VjpCtx& c) {
  Value* x = c.x(0);
  const I64s& bd = c.op.attrs.get_i64s("broadcast_dimensions");
  const hlo::Type& yt = c.y()->type;
  std::vector<bool> keep(static_cast<size_t>(yt.rank()), false);
  std::vector<int64_t> kept_x;  // x dims that survive the reduce
  for (size_t i = 0; i < bd.size(); ++i) {
    bool expanded = x->type.dim(static_cast<int64_t>(i)) == 1 && yt.dim(bd[i]) != 1;
    if (!expanded) {
      keep[static_cast<size_t>(bd[i])] = true;
      kept_x.push_back(static_cast<int64_t>(i));
    }
  }
  I64s dims;
  for (int64_t d = 0; d < yt.rank(); ++d)
    if (!keep[static_cast<size_t>(d)]) dims.push_back(d);
  Value* r = reduce_sum(c.b, c.dy[0], dims);
  // r's dims follow the kept output dims in ascending order; put them in x's order.
  std::vector<int64_t> by_out = kept_x;
  std::sort(by_out.begin(), by_out.end(), [&](int64_t a, int64_t b) {
    return bd[static_cast<size_t>(a)] < bd[static_cast<size_t>(b)];
  });
  I64s perm;
  for (int64_t xi : kept_x)
    perm.push_back(std::find(by_out.begin(), by_out.end(), xi) - by_out.begin());
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int64_t>(i);
  if (!identity) r = c.b.transpose(r, perm);
  if (r->type.shape() != x->type.shape()) r = c.b.reshape(r, x->type.shape());
  return {r};
}

// y = slice(x, start, limit, stride): dx = pad(dy, 0, low=start, high=rest, interior=stride-1).
V slice(VjpCtx& c) {
  Value* x = c.x(0);
  if (c.y()->type.numel() == 0) return {zeros(c.b, x->type)};
  const I64s& start = c.op.attrs.get_i64s("start_indices");
  I64s strides = c.op.attrs.has("strides") ? c.op.attrs.get_i64s("strides")
                                           : I64s(static_cast<size_t>(x->type.rank()), 1);
  I64s lo, hi, in;
  for (size_t d = 0; d < start.size(); ++d) {
    int64_t n = c.y()->type.dim(static_cast<int64_t>(d));
    int64_t last = at(start, d) + (n - 1) * at(strides, d);
    lo.push_back(at(start, d));
    hi.push_back(x->type.dim(static_cast<int64_t>(d)) - last - 1);
    in.push_back(at(strides, d) - 1);
  }
  return {c.b.pad(c.dy[0], c.b.scalar(0, x->type.dtype()), lo, hi, in)};
}

// y = dynamic_slice(x, i..): dx = dynamic_update_slice(0, dy, i..) (same index clamping).
V dynamic_slice(VjpCtx& c) {
  std::vector<Value*> idx(c.op.operands.begin() + 1, c.op.operands.end());
  V out(c.op.operands.size(), nullptr);
  out[0] = c.b.dynamic_update_slice(zeros(c.b, c.x(0)->type), c.dy[0], idx);
  return out;
}

// y = dynamic_update_slice(x, u, i..): dx = dus(dy, 0, i..), du = dynamic_slice(dy, i..).
V dynamic_update_slice(VjpCtx& c) {
  std::vector<Value*> idx(c.op.operands.begin() + 2, c.op.operands.end());
  V out(c.op.operands.size(), nullptr);
  Value* u = c.x(1);
  if (c.wants[0]) out[0] = c.b.dynamic_update_slice(c.dy[0], zeros(c.b, u->type), idx);
  if (c.wants[1]) out[1] = c.b.dynamic_slice(c.dy[0], idx, u->type.shape());
  return out;
}

// y = concatenate(x_i, d): dx_i = slice(dy) at x_i's offset along d.
V concatenate(VjpCtx& c) {
  int64_t dim = c.op.attrs.get_int("dimension");
  V out;
  int64_t off = 0;
  for (size_t i = 0; i < c.op.operands.size(); ++i) {
    const hlo::Type& t = c.x(i)->type;
    if (c.wants[i]) {
      I64s start(static_cast<size_t>(t.rank()), 0), limit = t.shape();
      start[static_cast<size_t>(dim)] = off;
      limit[static_cast<size_t>(dim)] = off + t.dim(dim);
      out.push_back(c.b.slice(c.dy[0], start, limit));
    } else {
      out.push_back(nullptr);
    }
    off += t.dim(dim);
  }
  return out;
}

// y = pad(x, v, lo, hi, in): x[k] sits at lo + k·(in+1). dx = strided slice of dy (after padding
// dy by the negative edges so cropped elements read 0); dv = sum(dy) - sum(dx).
V pad(VjpCtx& c) {
  Value* x = c.x(0);
  const hlo::Type& xt = x->type;
  const I64s& lo = c.op.attrs.get_i64s("edge_padding_low");
  const I64s& hi = c.op.attrs.get_i64s("edge_padding_high");
  I64s in = c.op.attrs.has("interior_padding") ? c.op.attrs.get_i64s("interior_padding")
                                               : I64s(lo.size(), 0);
  Value* dx = nullptr;
  if (xt.numel() == 0) {
    dx = zeros(c.b, xt);
  } else {
    I64s plo, phi, start, limit, stride;
    bool need_pad = false;
    for (size_t d = 0; d < lo.size(); ++d) {
      plo.push_back(std::max<int64_t>(0, -lo[d]));
      phi.push_back(std::max<int64_t>(0, -hi[d]));
      need_pad = need_pad || plo.back() || phi.back();
      int64_t s = std::max<int64_t>(lo[d], 0);
      start.push_back(s);
      stride.push_back(in[d] + 1);
      limit.push_back(s + (xt.dim(static_cast<int64_t>(d)) - 1) * (in[d] + 1) + 1);
    }
    Value* g = c.dy[0];
    if (need_pad) g = c.b.pad(g, c.b.scalar(0, xt.dtype()), plo, phi);
    dx = c.b.slice(g, start, limit, stride);
  }
  Value* dv = nullptr;
  if (c.wants[1]) {
    Value* total = sum_all(c.b, c.dy[0]);
    dv = xt.numel() == 0 ? total : c.b.subtract(total, sum_all(c.b, dx));
  }
  return {c.wants[0] ? dx : nullptr, dv};
}

}  // namespace

void register_shape_vjps(VjpRule* t) {
  hlo::FamilyTable<VjpRule> ft(t, "vjp_shape.cpp", {"shape"});
#define NETSPEC_SET_VJP(kind, name) ft.set(OpKind::kind, name);
  NETSPEC_SHAPE_FAMILY(NETSPEC_SET_VJP)
#undef NETSPEC_SET_VJP
}

}  // namespace netspec::autodiff
