// VJP rules of the window family. reduce_window-add: dx is a reduce_window-add of dy spread onto
// the input grid; reduce_window-max/min: dx = select_and_scatter(x, dy) (XLA's max-pool grad);
// select_and_scatter: d source = the dy entry at each window's selected position.
#include <limits>
#include <string>

#include "autodiff/rules.h"
#include "hlo/op_family.h"
#include "hlo/window_attrs.h"

namespace netspec::autodiff {
namespace {

using hlo::I64s;
using hlo::OpKind;
using hlo::Value;
using hlo::WindowOptions;

struct Win {
  I64s dims, strides, base, wdil;
  std::vector<std::pair<int64_t, int64_t>> pad;
};

Win read_window(const hlo::Op& op, size_t rank) {
  Win w;
  w.dims = op.attrs.get_i64s("window_dimensions");
  w.strides = hlo::attr_i64s_or(op, "window_strides", rank, 1);
  w.base = hlo::attr_i64s_or(op, "base_dilations", rank, 1);
  w.wdil = hlo::attr_i64s_or(op, "window_dilations", rank, 1);
  w.pad = hlo::attr_padding(op, rank);
  return w;
}

bool all_ones(const I64s& v) {
  for (int64_t x : v)
    if (x != 1) return false;
  return true;
}

// Sum pooling. Output o's window covers padded-dilated positions o·s + k·wd - lo, and x[i] sits at
// i·bd, so dx[i] = Σ_k c[i·bd + k·wd - P] with c = dy spread with stride s and P = (w-1)·wd - lo:
// pad dy (interior s-1, low P, high to fit) and reduce_window-add with stride bd, dilation wd.
Value* sum_pool_grad(hlo::Builder& b, const Win& w, Value* x, Value* dy) {
  const hlo::Type& xt = x->type;
  size_t r = static_cast<size_t>(xt.rank());
  I64s lo(r), hi(r), in(r);
  for (size_t d = 0; d < r; ++d) {
    int64_t n = xt.dim(static_cast<int64_t>(d));
    int64_t m = dy->type.dim(static_cast<int64_t>(d));
    int64_t ext = (w.dims[d] - 1) * w.wdil[d];
    lo[d] = ext - w.pad[d].first;
    in[d] = w.strides[d] - 1;
    int64_t len = (n - 1) * w.base[d] + ext + 1;  // canvas length the reduce needs
    hi[d] = len - lo[d] - ((m - 1) * w.strides[d] + 1);
  }
  Value* canvas = b.pad(dy, b.scalar(0, xt.dtype()), lo, hi, in);
  WindowOptions o;
  o.window_dimensions = w.dims;
  o.window_strides = w.base;
  o.window_dilations = w.wdil;
  return b.reduce_window(canvas, b.scalar(0, xt.dtype()), o, OpKind::kAdd);
}

std::vector<Value*> reduce_window(VjpCtx& c) {
  if (c.op.operands.size() != 2)
    fail("vjp", "stablehlo.reduce_window with {} inputs is not differentiable (expected 1)",
         c.op.operands.size() / 2);
  auto comb = region_combiner(*c.op.region(0));
  if (!comb || (*comb != OpKind::kAdd && *comb != OpKind::kMaximum && *comb != OpKind::kMinimum))
    fail("vjp",
         "stablehlo.reduce_window body is not one of add/maximum/minimum (use a custom VJP)");
  if (c.wants[1])
    fail("vjp",
         "stablehlo.reduce_window cannot differentiate its init value (it also fills the padding)");
  Value* x = c.x(0);
  Value* dy = c.dy[0];
  Win w = read_window(c.op, static_cast<size_t>(x->type.rank()));
  if (dy->type.numel() == 0 || x->type.numel() == 0) return {zeros(c.b, x->type), nullptr};
  if (*comb == OpKind::kAdd)
    return {sum_pool_grad(c.b, w, x, dy), nullptr};  // dx = Σ windows ∋ x of dy
  // max/min pool: dx = select_and_scatter(x, dy, 0; select GE/LE, scatter add)
  if (!all_ones(w.base) || !all_ones(w.wdil))
    fail("vjp",
         "stablehlo.reduce_window max/min with base or window dilations is not differentiable");
  const char* dir = *comb == OpKind::kMaximum ? "GE" : "LE";
  WindowOptions o;
  o.window_dimensions = w.dims;
  o.window_strides = w.strides;
  o.padding = w.pad;
  Value* dx = c.b.select_and_scatter(
      x, dy, c.b.scalar(0, x->type.dtype()), o,
      [dir](hlo::Builder& rb, const std::vector<Value*>& a) {
        return std::vector<Value*>{rb.compare(a[0], a[1], dir)};
      },
      [](hlo::Builder& rb, const std::vector<Value*>& a) {
        return std::vector<Value*>{rb.add(a[0], a[1])};
      });
  return {dx, nullptr};
}

// r = select_and_scatter(x, s, init) with a GE/LE compare select and an add scatter.
// ds[o] = dr at the position window o selects: a 2-input reduce_window over (x, dr) that keeps
// the pair whose x wins the select; dx = 0 (selection is piecewise constant); dinit = Σ dr.
std::vector<Value*> select_and_scatter(VjpCtx& c) {
  const hlo::Block& sel = *c.op.region(0);
  const hlo::Op* cmp = sel.ops.empty() ? nullptr : sel.ops[0].get();
  if (!cmp || cmp->kind != OpKind::kCompare || cmp->operand(0) != sel.arg(0) ||
      cmp->operand(1) != sel.arg(1))
    fail("vjp", "stablehlo.select_and_scatter select is not a compare of its arguments");
  std::string dir = cmp->attrs.get_enum("comparison_direction");
  auto scat = region_combiner(*c.op.region(1));
  if (!scat || *scat != OpKind::kAdd)
    fail("vjp", "stablehlo.select_and_scatter scatter is not an add");
  Value* x = c.x(0);
  Value* dr = c.dy[0];
  Win w = read_window(c.op, static_cast<size_t>(x->type.rank()));
  std::vector<Value*> out(3, nullptr);
  if (c.wants[1]) {
    bool is_max = dir == "GE" || dir == "GT";
    DType dt = x->type.dtype();
    double worst =
        is_max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    WindowOptions o;
    o.window_dimensions = w.dims;
    o.window_strides = w.strides;
    o.padding = w.pad;
    auto body = [dir](hlo::Builder& rb, const std::vector<Value*>& a) {
      // a = (x1, d1, x2, d2): keep (x1, d1) when select(x1, x2).
      Value* p = rb.compare(a[0], a[2], dir);
      return std::vector<Value*>{rb.select(p, a[0], a[2]), rb.select(p, a[1], a[3])};
    };
    auto r = c.b.reduce_window({x, dr}, {c.b.scalar(worst, dt), c.b.scalar(0, dt)}, o, body);
    out[1] = r[1];
  }
  if (c.wants[2]) out[2] = sum_all(c.b, dr);
  return out;
}

}  // namespace

void register_window_vjps(VjpRule* t) {
  hlo::FamilyTable<VjpRule> ft(t, "vjp_window.cpp", {"window"});
  ft.set(OpKind::kReduceWindow, reduce_window);
  ft.set(OpKind::kSelectAndScatter, select_and_scatter);
}

}  // namespace netspec::autodiff
