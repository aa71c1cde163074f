// convolution on oneDNN. StableHLO dimension numbers become strided memory descriptors over the
// user tensors (any NCHW/NHWC/OIHW/HWIO layout, no transposes of our own); the primitive picks
// its preferred (blocked) layouts and reorders run in plan-arena scratch. Plain convolutions
// (lhs_dilation 1) map to convolution_forward with asymmetric padding, dilation = rhs_dilation-1
// and groups = feature_group_count. Transposed convolutions (lhs_dilation > 1, unit window
// strides: what the input-gradient VJP emits) map to convolution_backward_data of the forward
// convolution with stride = lhs_dilation, the kernel spatially flipped and its feature dims
// swapped, padding_l = (K-1)*r - pad_lo. Weight-gradient convolutions (batch_group_count > 1, or
// a "kernel" larger than the result: dy) map to convolution_backward_weights. Negative high
// padding is a cropped view. Everything else (window reversal, negative low padding, f64, ...)
// runs on the ref kernel.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "exec/cpu/conv/conv_algorithm.h"
#include "exec/cpu/conv/conv_sides.h"
#include "exec/cpu/conv/winograd.h"
#include "exec/cpu/dnnl_util.h"
#include "exec/cpu/kernels.h"
#include "hlo/op_family.h"

namespace netspec::exec::cpu {
namespace {

using hlo::I64s;
using dt = dnnl::memory::data_type;
using dims_t = dnnl::memory::dims;

// Memory desc over a row-major tensor of `shape` whose oneDNN dims are the tensor dims `order`.
dnnl::memory::desc user_md(const Shape& shape, const std::vector<int64_t>& order,
                           dt type = dt::f32) {
  std::vector<int64_t> rs = row_major_strides(shape);
  dims_t d, s;
  for (int64_t o : order) {
    d.push_back(shape[static_cast<size_t>(o)]);
    s.push_back(rs[static_cast<size_t>(o)]);
  }
  return dnnl::memory::desc(d, type, s);
}

size_t dt_size(dt t) { return t == dt::bf16 ? 2 : 4; }

// oneDNN's reference implementations are far slower than our own fallbacks: refused.
bool is_ref(const char* impl) { return std::string_view(impl).rfind("ref", 0) == 0; }

struct ConvGeom {
  hlo::ConvDims d;
  // Operand type (f32, or bf16 with an f32 result) and the type the primitive reads them in
  // (bf16 natively, or f32: the reorders widen them).
  dt user = dt::f32, in = dt::f32;
  size_t ns = 0;  // spatial rank
  I64s strides, lhs_dil, rhs_dil;
  std::vector<int64_t> pad_lo, pad_hi;
  int64_t groups = 1;
};

// A negative high padding of fewer rows than the stride (a stride-2 conv on an even size never
// reads the last row) is 0 to oneDNN, which sizes outputs by floor division: the same conv, with
// the unread rows' gradient zero, on dense operands. The callers take it for channel-blocked
// operands, where a cropped view kept resnet50's 1x1 stride-2 gradients off the blocked layout
// (4 reorders around each, ~32 GFLOP/s on a Zen 1); plain ones keep the crop: oneDNN 2.6's
// channels-last jit_1x1 weight gradient is wrong on the uncropped input (4 -> 8 channels, 8x8).
void unread_rows_in_stride(dims_t& pad_hi, const dims_t& stride) {
  for (size_t i = 0; i < pad_hi.size(); ++i)
    if (pad_hi[i] < 0 && pad_hi[i] > -stride[i]) pad_hi[i] = 0;
}

// Weight-gradient form (what the weight-VJP emits: batch and feature roles of the input swapped,
// dy as the "kernel", batch_group_count = the forward's groups): dW of a forward convolution with
// src = lhs (N = input_feature, C = input_batch), diff_dst = rhs (N = kernel_input_feature,
// O = kernel_output_feature), stride = rhs_dilation, dilation = window_strides - 1, padding_l =
// pad_lo; padding_r is whatever makes the shapes consistent (positions past the end are zeros in
// both). Runs on oneDNN's convolution_backward_weights.
// blk.x / blk.w: x / dy are stored channel-blocked (used as the primitive's own descs).
std::optional<Compiled> compile_conv_bwd_weights(const hlo::Op& op, const hlo::ConvDims& cd,
                                                 size_t ns, const I64s& strides,
                                                 const I64s& rhs_dil,
                                                 const std::vector<int64_t>& pad_lo, int64_t bgc,
                                                 dt user, dt in, ConvBlocks blk) {
  const Shape& xs = op.operand_type(0).shape();
  const Shape& dys = op.operand_type(1).shape();
  const Shape& ws = op.result(0)->type.shape();
  auto dim = [](const Shape& s, int64_t d) { return s[static_cast<size_t>(d)]; };
  const int64_t N = dim(xs, cd.input_feature), C = dim(xs, cd.input_batch);
  const int64_t O = dim(dys, cd.kernel_output_feature);
  if (dim(dys, cd.kernel_input_feature) != N || dim(ws, cd.output_feature) != O)
    return std::nullopt;
  if (bgc < 1 || C % bgc != 0 || O % bgc != 0 || dim(ws, cd.output_batch) != C / bgc)
    return std::nullopt;
  dims_t st, dil, pl, pr;
  for (size_t i = 0; i < ns; ++i) {
    const int64_t H = dim(xs, cd.input_spatial[i]), OH = dim(dys, cd.kernel_spatial[i]);
    const int64_t KH = dim(ws, cd.output_spatial[i]);
    const int64_t s = rhs_dil[i], d = strides[i], l = pad_lo[i];
    const int64_t r = (OH - 1) * s + (KH - 1) * d + 1 - H - l;
    if (l < 0 || s < 1 || d < 1 || H + std::min<int64_t>(r, 0) < 1) return std::nullopt;
    st.push_back(s);
    dil.push_back(d - 1);
    pl.push_back(l);
    pr.push_back(r);
  }
  std::vector<int64_t> x_order{cd.input_feature, cd.input_batch},
      dy_order{cd.kernel_input_feature, cd.kernel_output_feature};
  for (int64_t v : cd.input_spatial) x_order.push_back(v);
  for (int64_t v : cd.kernel_spatial) dy_order.push_back(v);
  dnnl::memory::desc x_user = user_md(xs, x_order, user), dy_user = user_md(dys, dy_order, user);
  if (blk.x) x_user = blocked_md(x_user.dims(), blk.x);
  if (blk.w) dy_user = blocked_md(dy_user.dims(), blk.w);
  // netspec's own Winograd weight gradient where conv_algorithm.h's own_winograd takes the conv.
  if (bgc == 1 && ns == 2 && in == dt::f32 && user == dt::f32 && pr[0] >= 0 && pr[1] >= 0) {
    const dims_t xd = x_user.dims(), dyd = dy_user.dims();
    const std::vector<int64_t> wrs = row_major_strides(ws);
    auto w_st = [&](int64_t d) { return wrs[static_cast<size_t>(d)]; };
    if (own_winograd(in, xd, {O, C, dim(ws, cd.output_spatial[0]), dim(ws, cd.output_spatial[1])},
                     dyd, st, dil, WinogradPass::kWeightGradient))
      if (auto c = compile_own_winograd_grad(
              WinogradShape{N, C, xd[2], xd[3], O, dyd[2], dyd[3], pl[0], pl[1]},
              WinogradWeights{w_st(cd.output_feature), w_st(cd.output_batch),
                              w_st(cd.output_spatial[0]), w_st(cd.output_spatial[1])},
              x_user, dy_user))
        return c;
  }
  // A depthwise gradient (groups = channels = outputs) on plain operands: netspec's own kernel
  // where oneDNN would run its gemm fallback (checked below; its jit_dw takes 3x3 only).
  std::optional<DepthwiseGradShape> dw_own;
  if (bgc > 1 && bgc == C && O == C && ns == 2 && in == dt::f32 && user == dt::f32 && !blk.x &&
      !blk.w) {
    const std::vector<int64_t> xr = row_major_strides(xs), dr = row_major_strides(dys),
                               wr = row_major_strides(ws);
    auto at = [](const std::vector<int64_t>& r, int64_t d) { return r[static_cast<size_t>(d)]; };
    dw_own = DepthwiseGradShape{N,
                                C,
                                dim(xs, cd.input_spatial[0]),
                                dim(xs, cd.input_spatial[1]),
                                dim(dys, cd.kernel_spatial[0]),
                                dim(dys, cd.kernel_spatial[1]),
                                dim(ws, cd.output_spatial[0]),
                                dim(ws, cd.output_spatial[1]),
                                st[0],
                                st[1],
                                dil[0] + 1,
                                dil[1] + 1,
                                pl[0],
                                pl[1],
                                at(xr, cd.input_feature),
                                at(xr, cd.input_batch),
                                at(xr, cd.input_spatial[0]),
                                at(xr, cd.input_spatial[1]),
                                at(dr, cd.kernel_input_feature),
                                at(dr, cd.kernel_output_feature),
                                at(dr, cd.kernel_spatial[0]),
                                at(dr, cd.kernel_spatial[1]),
                                at(wr, cd.output_feature),
                                at(wr, cd.output_spatial[0]),
                                at(wr, cd.output_spatial[1])};
    if (const char* e = std::getenv("NETSPEC_CONV_OWN_DW"); e && e[0] == '1')  // tests: always
      return compile_depthwise_weight_grad(*dw_own);
  }
  const bool channels_last =
      bwd_weights_channels_last(in, dy_user.dims(), bgc) && x_user.dims().size() == 4;
  if (blk.x && !channels_last) unread_rows_in_stride(pr, st);
  // Negative high padding (a strided conv whose last rows are never read): view a cropped x
  // (same strides, fewer rows) with zero padding instead.
  if (std::any_of(pr.begin(), pr.end(), [](int64_t v) { return v < 0; })) {
    dims_t xd = x_user.dims(), xst;
    std::vector<int64_t> rs = row_major_strides(xs);
    for (int64_t o : x_order) xst.push_back(rs[static_cast<size_t>(o)]);
    for (size_t i = 0; i < ns; ++i)
      if (pr[i] < 0) xd[i + 2] += pr[i], pr[i] = 0;
    try {
      x_user = blk.x ? x_user.submemory_desc(xd, dims_t(xd.size(), 0))
                     : dnnl::memory::desc(xd, user, xst);
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
  }
  std::vector<int64_t> wrs = row_major_strides(ws);
  const int64_t s_o = wrs[static_cast<size_t>(cd.output_feature)],
                s_c = wrs[static_cast<size_t>(cd.output_batch)];
  dims_t wd, wst;
  if (bgc > 1)
    wd = {bgc, O / bgc, C / bgc}, wst = {s_o * (O / bgc), s_o, s_c};
  else
    wd = {O, C}, wst = {s_o, s_c};
  for (int64_t v : cd.output_spatial) {
    wd.push_back(dim(ws, v));
    wst.push_back(wrs[static_cast<size_t>(v)]);
  }
  dnnl::memory::desc w_user(wd, dt::f32, wst);
  auto any_md = [](const dims_t& d, dt t) {
    return dnnl::memory::desc(d, t, dnnl::memory::format_tag::any);
  };
  auto& eng = dnnl_engine();
  dnnl::convolution_backward_weights::primitive_desc pd;
  try {
    // Blocked operands (f32 only) are given as they are stored (no reorder); the rest is
    // oneDNN's choice.
    auto x_md = blk.x ? x_user : any_md(x_user.dims(), in);
    auto dy_md = blk.w ? dy_user : any_md(dy_user.dims(), in);
    if (channels_last) {
      x_md = dnnl::memory::desc(x_user.dims(), in, dnnl::memory::format_tag::nhwc);
      dy_md = dnnl::memory::desc(dy_user.dims(), in, dnnl::memory::format_tag::nhwc);
    }
    pd = with_conv_algorithm(
        conv_algorithm(in, x_md.dims(), wd, dy_md.dims(), st, dil),
        [&](dnnl::algorithm algo) {
          dnnl::convolution_forward::desc fdesc(dnnl::prop_kind::forward_training, algo, x_md,
                                                any_md(wd, in), dy_md, st, dil, pl, pr);
          dnnl::convolution_forward::primitive_desc fpd(fdesc, eng);
          dnnl::convolution_backward_weights::desc bdesc(algo, x_md, any_md(wd, dt::f32), dy_md, st,
                                                         dil, pl, pr);
          return dnnl::convolution_backward_weights::primitive_desc(
              bdesc, dnnl_user_scratchpad_attr(), eng, fpd);
        },
        [&](const auto& p) {
          return can_reorder(x_user, p.src_desc()) && can_reorder(dy_user, p.diff_dst_desc()) &&
                 can_reorder(p.diff_weights_desc(), w_user);
        });
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  // oneDNN 2.6's AMX bf16 backward-weights kernel ran ~20x slower than the f32 one here
  // (resnet18-cifar, docs/performance.md): bf16 operands are widened to f32 for it instead.
  if (in == dt::bf16 && std::string_view(pd.impl_info_str()).find("amx") != std::string_view::npos)
    return std::nullopt;
  if (dw_own && std::string_view(pd.impl_info_str()).find("gemm") != std::string_view::npos)
    return compile_depthwise_weight_grad(*dw_own);
  if (is_ref(pd.impl_info_str())) return std::nullopt;
  Side xs_ = Side::input(x_user, pd.src_desc());
  Side dys_ = Side::input(dy_user, pd.diff_dst_desc());
  Side ws_ = Side::output(w_user, pd.diff_weights_desc());
  size_t off = place_sides({&xs_, &dys_, &ws_}, 0);
  size_t pad_off = off, pad_bytes = pd.scratchpad_desc().get_size();
  Compiled c;
  c.scratch_bytes = off + pad_bytes;
  c.winograd = is_winograd(pd.impl_info_str());
  const ConvPrimitive conv(std::make_shared<dnnl::convolution_backward_weights>(pd), xs_,
                           DNNL_ARG_SRC, dys_, DNNL_ARG_DIFF_DST, ws_, DNNL_ARG_DIFF_WEIGHTS,
                           pd.scratchpad_desc(), pad_off);
  c.run = [=](const RunArgs& a) {
    conv.run(a.in[0]->raw(), a.in[1]->raw(), a.out[0]->raw(), a.scratch);
  };
  return c;
}

// rhs_flipped: the kernel operand holds the spatial reverse of the kernel this op convolves with
// (compile_conv_rhs_reversed); the weight preparation flips it back.
// Parses a convolution's attributes (f32 operands, 1-3 spatial dims, no window reversal);
// nullopt when the cpu kernels do not take this form.
std::optional<ConvGeom> conv_geom(const hlo::Op& op) {
  if (op.operands.size() != 2) return std::nullopt;
  auto* cd = op.attrs.get_if<hlo::ConvDims>("dimension_numbers");
  if (!cd) return std::nullopt;
  const DType ot = op.operand_type(0).dtype();
  if (op.operand_type(1).dtype() != ot || (ot != DType::kF32 && ot != DType::kBF16))
    return std::nullopt;
  if (op.result(0)->type.dtype() != DType::kF32) return std::nullopt;
  if (op.operand_type(0).numel() == 0 || op.operand_type(1).numel() == 0 ||
      op.result(0)->type.numel() == 0)
    return std::nullopt;
  ConvGeom g;
  g.d = *cd;
  g.user = g.in = ot == DType::kBF16 ? dt::bf16 : dt::f32;
  g.ns = cd->input_spatial.size();
  if (g.ns < 1 || g.ns > 3) return std::nullopt;
  g.groups = op.attrs.get_int_or("feature_group_count", 1);
  for (auto* name : {"window_reversal"}) {
    if (auto* wr = op.attrs.get_if<std::vector<bool>>(name))
      for (bool b : *wr)
        if (b) return std::nullopt;
    if (auto* wr = op.attrs.get_if<hlo::DenseAttr>(name))
      for (int64_t i = 0; i < wr->value.numel(); ++i)
        if (wr->value.as_int64(i)) return std::nullopt;
  }
  auto get = [&](const char* name) {
    I64s v = i64s_attr(op, name);
    if (v.empty()) v.assign(g.ns, 1);
    return v;
  };
  g.strides = get("window_strides");
  g.lhs_dil = get("lhs_dilation");
  g.rhs_dil = get("rhs_dilation");
  I64s pad = i64s_attr(op, "padding");
  g.pad_lo.assign(g.ns, 0);
  g.pad_hi.assign(g.ns, 0);
  if (!pad.empty()) {
    if (pad.size() != 2 * g.ns) return std::nullopt;
    for (size_t i = 0; i < g.ns; ++i) g.pad_lo[i] = pad[2 * i], g.pad_hi[i] = pad[2 * i + 1];
  }
  if (g.strides.size() != g.ns || g.lhs_dil.size() != g.ns || g.rhs_dil.size() != g.ns)
    return std::nullopt;
  return g;
}

dnnl::memory::desc any_md(const dims_t& d, dt t = dt::f32) {
  return dnnl::memory::desc(d, t, dnnl::memory::format_tag::any);
}

// The operand layouts both convolution paths share, from the dimension numbers.
struct ConvLayout {
  Shape xs, ys;
  int64_t G = 1, O = 0, KI = 0;  // groups, output and per-group input features
  std::vector<int64_t> y_order;
  dnnl::memory::desc x_user, y_user;
  int64_t s_o = 0, s_i = 0;  // kernel strides of its output / input feature dims
  dims_t ksz, kst, dil;      // kernel spatial sizes and strides; rhs dilation - 1 (oneDNN's)
};

std::optional<ConvLayout> conv_layout(const hlo::Op& op, const ConvGeom& g) {
  const hlo::ConvDims* cd = &g.d;
  ConvLayout L;
  L.xs = op.operand_type(0).shape();
  const Shape& ws = op.operand_type(1).shape();
  L.ys = op.result(0)->type.shape();
  L.G = g.groups;
  L.O = ws[static_cast<size_t>(cd->kernel_output_feature)];
  L.KI = ws[static_cast<size_t>(cd->kernel_input_feature)];
  if (L.G < 1 || L.O % L.G != 0) return std::nullopt;
  for (size_t i = 0; i < g.ns; ++i)
    if (g.rhs_dil[i] < 1 || g.strides[i] < 1 || g.lhs_dil[i] < 1) return std::nullopt;
  std::vector<int64_t> x_order{cd->input_batch, cd->input_feature};
  L.y_order = {cd->output_batch, cd->output_feature};
  for (int64_t s : cd->input_spatial) x_order.push_back(s);
  for (int64_t s : cd->output_spatial) L.y_order.push_back(s);
  L.x_user = user_md(L.xs, x_order, g.user);
  L.y_user = user_md(L.ys, L.y_order);
  std::vector<int64_t> wrs = row_major_strides(ws);
  L.s_o = wrs[static_cast<size_t>(cd->kernel_output_feature)];
  L.s_i = wrs[static_cast<size_t>(cd->kernel_input_feature)];
  for (int64_t s : cd->kernel_spatial) {
    L.ksz.push_back(ws[static_cast<size_t>(s)]);
    L.kst.push_back(wrs[static_cast<size_t>(s)]);
  }
  for (int64_t r : g.rhs_dil) L.dil.push_back(r - 1);
  return L;
}

// A direct convolution on oneDNN's forward primitive (rhs_flipped: the kernel operand is read
// spatially reversed, see compile_conv_rhs_reversed).
// affine: y * s[c] + t[c] (operands 2, 3, [C]) and then, with relu, max(y, 0) as oneDNN
// post-ops in the conv's own pass (BN on running statistics + ReLU, folded by the planner).
struct ConvPostOps {
  bool affine = false, relu = false;
};

// netspec's own Winograd kernels where conv_algorithm.h's own_winograd takes them (the kernel
// read through its strides, a flipped operand backwards).
std::optional<Compiled> compile_conv_own_winograd(const ConvGeom& g, const ConvLayout& L,
                                                  bool rhs_flipped, ConvBlocks blk) {
  if (g.in != dt::f32 || g.user != dt::f32 || L.G != 1 || g.ns != 2) return std::nullopt;
  const dims_t xd = L.x_user.dims(), yd = L.y_user.dims();
  const dims_t wd{L.O, L.KI, L.ksz[0], L.ksz[1]};
  if (!own_winograd(g.in, xd, wd, yd, dims_t(g.strides.begin(), g.strides.end()), L.dil,
                    WinogradPass::kForward))
    return std::nullopt;
  for (size_t i = 0; i < 2; ++i)
    if (g.pad_lo[i] < 0 || g.pad_hi[i] < 0) return std::nullopt;
  // w[o, c, ky, kx] = operand[o, c, ky, kx], or [o, c, 2 - ky, 2 - kx] when flipped.
  WinogradWeights ws{L.s_o, L.s_i, L.kst[0], L.kst[1]};
  int64_t w_base = 0;
  if (rhs_flipped) {
    w_base = 2 * L.kst[0] + 2 * L.kst[1];
    ws.ky = -ws.ky, ws.kx = -ws.kx;
  }
  const WinogradShape s{xd[0], xd[1], xd[2], xd[3], yd[1], yd[2], yd[3], g.pad_lo[0], g.pad_lo[1]};
  return compile_own_winograd(s, ws, w_base, blk.x ? blocked_md(xd, blk.x) : L.x_user,
                              blk.y ? blocked_md(yd, blk.y) : L.y_user);
}

std::optional<Compiled> compile_conv_direct(const ConvGeom& g, const ConvLayout& L,
                                            bool rhs_flipped, ConvBlocks blk,
                                            ConvPostOps post = {}) {
  if (!post.affine)
    if (auto c = compile_conv_own_winograd(g, L, rhs_flipped, blk)) return c;
  const int64_t G = L.G, O = L.O, KI = L.KI, s_o = L.s_o, s_i = L.s_i;
  const dims_t &ksz = L.ksz, &kst = L.kst, &dil = L.dil;
  const dnnl::memory::desc x_user = blk.x ? blocked_md(L.x_user.dims(), blk.x) : L.x_user;
  const dnnl::memory::desc y_user = blk.y ? blocked_md(L.y_user.dims(), blk.y) : L.y_user;
  auto attr = dnnl_user_scratchpad_attr();
  dims_t chan_dims(2 + g.ns, 1);  // [1, O, 1, 1]: a per-channel post-op operand
  chan_dims[1] = O;
  const dnnl::memory::desc chan_md(chan_dims, dt::f32, row_major_strides(chan_dims));
  if (post.affine) {
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_mul, chan_md);
    ops.append_binary(dnnl::algorithm::binary_add, chan_md);
    if (post.relu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(ops);
  }
  auto& eng = dnnl_engine();
  Compiled c;
  for (size_t i = 0; i < g.ns; ++i)
    if (g.pad_lo[i] < 0 || g.pad_hi[i] < 0) return std::nullopt;
  // Weights: (O, I, K...) or grouped (G, O/G, I, K...).
  dims_t wd, wst;
  if (G > 1)
    wd = {G, O / G, KI}, wst = {s_o * (O / G), s_o, s_i};
  else
    wd = {O, KI}, wst = {s_o, s_i};
  wd.insert(wd.end(), ksz.begin(), ksz.end());
  wst.insert(wst.end(), kst.begin(), kst.end());
  dnnl::memory::desc w_user(wd, g.user, wst);
  const size_t es = dt_size(g.user);
  // A flipped kernel operand is first copied back to kernel order, densely, into scratch.
  std::vector<int64_t> unflip_dims(wd.begin(), wd.end()), unflip_st(wst.begin(), wst.end());
  int64_t unflip_base = 0;
  if (rhs_flipped) {
    for (size_t i = 0; i < g.ns; ++i) {
      const size_t k = wd.size() - g.ns + i;
      unflip_base += (wd[k] - 1) * wst[k];
      unflip_st[k] = -wst[k];
    }
    std::vector<int64_t> dense = row_major_strides(unflip_dims);
    w_user = dnnl::memory::desc(wd, g.user, dims_t(dense.begin(), dense.end()));
  }
  const size_t unflip_bytes =
      rhs_flipped ? scratch_align(static_cast<size_t>(num_elements(unflip_dims)) * es) : 0;
  dims_t st(g.strides.begin(), g.strides.end()), pl(g.pad_lo.begin(), g.pad_lo.end()),
      pr(g.pad_hi.begin(), g.pad_hi.end());
  // Default: oneDNN picks its layouts (jit:avx512_core on blocked nChw16c, plus reorders).
  // NETSPEC_CONV_PLAIN=1 keeps the user's src/dst layouts instead (gemm-based impl, no
  // reorders), if a non-reference implementation exists; see docs/performance.md.
  dnnl::convolution_forward::primitive_desc pd;
  bool plain =
      std::getenv("NETSPEC_CONV_PLAIN") != nullptr && g.in == g.user && !blk.any() && !post.affine;
  try {
    if (plain) {
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::convolution_direct, x_user,
                                           any_md(wd, g.in), y_user, st, dil, pl, pr);
      pd = dnnl::convolution_forward::primitive_desc(desc, attr, eng);
      if (is_ref(pd.impl_info_str())) plain = false;
    }
  } catch (const dnnl::error&) {
    plain = false;
  }
  try {
    if (!plain) {
      // Ungrouped 2-D convs whose channels are multiples of 16 use the blocked nChw16c layout
      // (jit:avx512_core, what PyTorch's ideep picks): left to choose ("any"), oneDNN 2.6 takes
      // brgconv on NHWC, measured ~5-8 % slower per resnet18-cifar step (docs/performance.md).
      // NETSPEC_CONV_ANY=1 restores oneDNN's own choice.
      static const bool any_layout = [] {
        const char* e = std::getenv("NETSPEC_CONV_ANY");
        return e && *e && std::string_view(e) != "0";
      }();
      // The block size is the planner's choice for this CPU (16 with AVX-512, 8 with AVX2);
      // operands the planner keeps blocked are given as stored (blk), so no reorder runs.
      const int B = layout_block_size();
      auto make_pd = [&](bool blocked) {
        auto act_md = [&](const dnnl::memory::desc& user, int role_block, dt t) {
          if (role_block) return user;
          const dims_t d = user.dims();
          if (blocked && B && d.size() == 4 && d[1] % B == 0) return blocked_md(d, B, t);
          return any_md(d, t);
        };
        const auto x_md = act_md(x_user, blk.x, g.in), y_md = act_md(y_user, blk.y, dt::f32);
        return with_conv_algorithm(
            conv_algorithm(g.in, x_md.dims(), wd, y_md.dims(), st, dil),
            [&](dnnl::algorithm a) {
              dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, a, x_md,
                                                   any_md(wd, g.in), y_md, st, dil, pl, pr);
              return dnnl::convolution_forward::primitive_desc(desc, attr, eng);
            },
            [&](const auto& p) {
              return can_reorder(x_user, p.src_desc()) && can_reorder(w_user, p.weights_desc()) &&
                     can_reorder(p.dst_desc(), y_user);
            });
      };
      // bf16: oneDNN's own choice (AMX brgconv on NHWC) ran ~6x faster than nChw16c's jit_bf16.
      bool blocked = !any_layout && G == 1 && g.ns == 2 && g.in != dt::bf16;
      if (blk.any()) {  // the planner's layouts or nothing (it then plans the conv row-major)
        try {
          pd = make_pd(!any_layout);
        } catch (const dnnl::error&) {
          return std::nullopt;
        }
        if (is_ref(pd.impl_info_str())) return std::nullopt;
        blocked = true;
      } else if (blocked) {
        try {
          pd = make_pd(true);
          blocked = !is_ref(pd.impl_info_str());
        } catch (const dnnl::error&) {
          blocked = false;
        }
      }
      if (!blocked) pd = make_pd(false);
    }
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  if ((post.affine || g.in == dt::bf16) && is_ref(pd.impl_info_str())) return std::nullopt;
  Side xs_ = Side::input(x_user, pd.src_desc());
  Side ws_ = Side::input(w_user, pd.weights_desc());
  Side ys_ = Side::output(y_user, pd.dst_desc());
  size_t off = place_sides({&xs_, &ws_, &ys_}, unflip_bytes);
  size_t pad_off = off, pad_bytes = pd.scratchpad_desc().get_size();
  c.scratch_bytes = off + pad_bytes;
  c.winograd = is_winograd(pd.impl_info_str());
  const ConvPrimitive conv(std::make_shared<dnnl::convolution_forward>(pd), xs_, DNNL_ARG_SRC, ws_,
                           DNNL_ARG_WEIGHTS, ys_, DNNL_ARG_DST, pd.scratchpad_desc(), pad_off);
  // Weights that stay the same between calls (an evaluation session's parameters, a module
  // constant) are reordered into the kernel's layout once and kept: at batch 1 the reorder
  // (Winograd's weight transform most of all) cost more than the convolution.
  c.keeps = ws_.staged() && !rhs_flipped;
  c.run = [=](const RunArgs& a) {
    const void* w_src = a.in[1]->raw();
    bool w_ready = false;
    if (rhs_flipped) {
      strided_copy(a.scratch, static_cast<const uint8_t*>(a.in[1]->raw()) + unflip_base * es,
                   unflip_dims, unflip_st, es);
      w_src = a.scratch;
    } else if (const uint64_t gen = a.gen(1); gen != 0 && a.kept && ws_.staged()) {
      KeptCopy& k = *a.kept;
      if (k.gen != gen) {
        uint8_t* d = k.get(ws_.prim.get_size());
        ws_.fill(a.in[1]->raw(), d, a.scratch);
        k.refreshed(gen);
      }
      w_src = k.data.get();
      w_ready = true;
    }
    std::unordered_map<int, dnnl::memory> post_args;
    if (post.affine)
      for (int k = 0; k < 2; ++k)
        post_args.insert(
            {DNNL_ARG_ATTR_MULTIPLE_POST_OP(k) | DNNL_ARG_SRC_1,
             dnnl::memory(chan_md, dnnl_engine(), const_cast<void*>(a.in[2 + k]->raw()))});
    conv.run(a.in[0]->raw(), w_src, a.out[0]->raw(), a.scratch, std::move(post_args), w_ready);
  };
  return c;
}

// A transposed convolution (lhs_dilation > 1: the input gradient of a strided conv) as
// oneDNN's backward-data primitive of a forward conv from y-shaped src to x-shaped dst.
std::optional<Compiled> compile_conv_transposed(const ConvGeom& g, const ConvLayout& L,
                                                bool rhs_flipped, ConvBlocks blk) {
  const hlo::ConvDims* cd = &g.d;
  const Shape &xs = L.xs, &ys = L.ys;
  const int64_t G = L.G, O = L.O, KI = L.KI, s_o = L.s_o, s_i = L.s_i;
  const dims_t &ksz = L.ksz, &kst = L.kst, &dil = L.dil;
  const std::vector<int64_t>& y_order = L.y_order;
  const dnnl::memory::desc x_user = blk.x ? blocked_md(L.x_user.dims(), blk.x) : L.x_user;
  dnnl::memory::desc y_user = blk.y ? blocked_md(L.y_user.dims(), blk.y) : L.y_user;
  auto attr = dnnl_user_scratchpad_attr();
  auto& eng = dnnl_engine();
  Compiled c;
  for (size_t i = 0; i < g.ns; ++i)
    if (g.strides[i] != 1) return std::nullopt;
  const int64_t Cx = xs[static_cast<size_t>(cd->input_feature)];
  if (Cx != KI * G) return std::nullopt;
  dims_t st, pl, pr;
  for (size_t i = 0; i < g.ns; ++i) {
    int64_t K = ksz[i], r = g.rhs_dil[i], d = g.lhs_dil[i];
    int64_t sx = xs[static_cast<size_t>(cd->input_spatial[i])],
            sy = ys[static_cast<size_t>(cd->output_spatial[i])];
    int64_t l = (K - 1) * r - g.pad_lo[i];
    int64_t rr = (sx - 1) * d + (K - 1) * r + 1 - sy - l;
    if (l < 0 || sy + std::min<int64_t>(rr, 0) < 1) return std::nullopt;
    st.push_back(d);
    pl.push_back(l);
    pr.push_back(rr);
  }
  if (blk.y) unread_rows_in_stride(pr, st);
  // Negative high padding (dx of a strided conv that never read the input's last rows): those
  // rows of y only see padding, so they are zero; the primitive writes a cropped view of y.
  bool crop = false;
  if (std::any_of(pr.begin(), pr.end(), [](int64_t v) { return v < 0; })) {
    dims_t yd = y_user.dims(), yst;
    std::vector<int64_t> rs = row_major_strides(ys);
    for (int64_t o : y_order) yst.push_back(rs[static_cast<size_t>(o)]);
    for (size_t i = 0; i < g.ns; ++i)
      if (pr[i] < 0) yd[i + 2] += pr[i], pr[i] = 0;
    try {
      y_user = blk.y ? y_user.submemory_desc(yd, dims_t(yd.size(), 0))
                     : dnnl::memory::desc(yd, dt::f32, yst);
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
    crop = true;
  }
  // Forward weights W'[g, a, b, k] = rhs[kif = a, kof = g*(O/G) + b, K-1-k], dense in scratch.
  dims_t wd = {G, KI, O / G};
  wd.insert(wd.end(), ksz.begin(), ksz.end());
  std::vector<int64_t> flip_dims(wd.begin(), wd.end()), flip_st{s_o * (O / G), s_i, s_o};
  int64_t flip_base = 0;
  for (size_t i = 0; i < g.ns; ++i) {  // (an already flipped operand is copied straight)
    flip_st.push_back(rhs_flipped ? kst[i] : -kst[i]);
    if (!rhs_flipped) flip_base += (ksz[i] - 1) * kst[i];
  }
  dims_t wd_prim = G > 1 ? wd : dims_t(wd.begin() + 1, wd.end());
  std::vector<int64_t> wdp_rs =
      row_major_strides(std::vector<int64_t>(wd_prim.begin(), wd_prim.end()));
  dnnl::memory::desc w_dense(wd_prim, g.user, dims_t(wdp_rs.begin(), wdp_rs.end()));
  const size_t es = dt_size(g.user);
  dnnl::convolution_backward_data::primitive_desc pd;
  try {
    auto y_md = blk.y ? y_user : any_md(y_user.dims(), g.in);
    auto x_md = blk.x ? x_user : any_md(x_user.dims(), g.in);
    pd = with_conv_algorithm(
        conv_algorithm(g.in, y_md.dims(), wd_prim, x_md.dims(), st, dil),
        [&](dnnl::algorithm a) {
          dnnl::convolution_forward::desc fdesc(dnnl::prop_kind::forward_training, a, y_md,
                                                any_md(wd_prim, g.in), x_md, st, dil, pl, pr);
          dnnl::convolution_forward::primitive_desc fpd(fdesc, eng);
          // (diff_src stays f32 with bf16 operands: blk.y means an f32 blocked dx.)
          dnnl::convolution_backward_data::desc bdesc(a, blk.y ? y_user : any_md(y_user.dims()),
                                                      any_md(wd_prim, g.in), x_md, st, dil, pl, pr);
          return dnnl::convolution_backward_data::primitive_desc(bdesc, attr, eng, fpd);
        },
        [&](const auto& p) {
          return can_reorder(x_user, p.diff_dst_desc()) && can_reorder(w_dense, p.weights_desc()) &&
                 can_reorder(p.diff_src_desc(), y_user);
        });
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  if ((blk.any() || g.in == dt::bf16) && is_ref(pd.impl_info_str())) return std::nullopt;
  Side xs_ = Side::input(x_user, pd.diff_dst_desc());
  Side ws_ = Side::input(w_dense, pd.weights_desc());
  Side ys_ = Side::output(y_user, pd.diff_src_desc());
  size_t flip_bytes = scratch_align(
      static_cast<size_t>(num_elements(std::vector<int64_t>(wd.begin(), wd.end()))) * es);
  size_t off = place_sides({&xs_, &ws_, &ys_}, flip_bytes);
  size_t pad_off = off, pad_bytes = pd.scratchpad_desc().get_size();
  c.scratch_bytes = off + pad_bytes;
  c.winograd = is_winograd(pd.impl_info_str());
  const ConvPrimitive conv(std::make_shared<dnnl::convolution_backward_data>(pd), xs_,
                           DNNL_ARG_DIFF_DST, ws_, DNNL_ARG_WEIGHTS, ys_, DNNL_ARG_DIFF_SRC,
                           pd.scratchpad_desc(), pad_off);
  c.run = [=](const RunArgs& a) {
    const uint8_t* w0 = static_cast<const uint8_t*>(a.in[1]->raw()) + flip_base * es;
    if (crop) std::memset(a.out[0]->raw(), 0, a.out[0]->nbytes());
    strided_copy(a.scratch, w0, flip_dims, flip_st, es);
    // The flipped weights sit at the start of the scratch.
    conv.run(a.in[0]->raw(), a.scratch, a.out[0]->raw(), a.scratch);
  };
  return c;
}

// The weight-gradient form: a batch-grouped conv, or a "kernel" (dy) larger than the result
// (dW is k x k while dy is the activation's size). Both mean backward-weights.
bool bwd_weights_form(const hlo::Op& op, const ConvGeom& g, int64_t bgc) {
  const hlo::ConvDims* cd = &g.d;
  bool unit_lhs = std::all_of(g.lhs_dil.begin(), g.lhs_dil.end(), [](int64_t v) { return v == 1; });
  int64_t out_sp = 1, ker_sp = 1;
  for (size_t i = 0; i < g.ns; ++i) {
    out_sp *= op.result(0)->type.dim(cd->output_spatial[i]);
    ker_sp *= op.operand_type(1).dim(cd->kernel_spatial[i]);
  }
  const char* nobw = std::getenv("NETSPEC_CONV_NO_BWD_WEIGHTS");
  return unit_lhs && g.groups == 1 && (bgc > 1 || out_sp < ker_sp) && !(nobw && *nobw);
}

std::optional<Compiled> compile_conv_as(const hlo::Op& op, const ConvGeom& g, bool rhs_flipped,
                                        ConvBlocks blk) {
  const hlo::ConvDims* cd = &g.d;
  const int64_t bgc = op.attrs.get_int_or("batch_group_count", 1);
  if (bwd_weights_form(op, g, bgc)) {
    if (rhs_flipped) return std::nullopt;  // the "kernel" is dy here, not a weight
    if (auto c = compile_conv_bwd_weights(op, *cd, g.ns, g.strides, g.rhs_dil, g.pad_lo, bgc,
                                          g.user, g.in, blk))
      return c;
    if (blk.any()) return std::nullopt;
  }
  if (bgc != 1) return std::nullopt;
  std::optional<ConvLayout> L = conv_layout(op, g);
  if (!L) return std::nullopt;
  bool transposed =
      std::any_of(g.lhs_dil.begin(), g.lhs_dil.end(), [](int64_t v) { return v != 1; });
  return transposed ? compile_conv_transposed(g, *L, rhs_flipped, blk)
                    : compile_conv_direct(g, *L, rhs_flipped, blk);
}

// bf16 operands: oneDNN's bf16 primitives where it has a non-reference one (AVX-512 BF16, AMX),
// else (or with NETSPEC_BF16_EMULATE) the f32 primitives on operands widened by the reorders.
// blk (the planner's blocked roles) is only ever set for f32 operands (conv_blockable_roles).
std::optional<Compiled> compile_conv_impl(const hlo::Op& op, bool rhs_flipped, ConvBlocks blk) {
  std::optional<ConvGeom> geom = conv_geom(op);
  if (!geom) return std::nullopt;
  ConvGeom g = *geom;
  if (g.user == dt::bf16 && !bf16_emulated())
    if (auto c = compile_conv_as(op, g, rhs_flipped, blk)) return c;
  g.in = dt::f32;
  return compile_conv_as(op, g, rhs_flipped, blk);
}

std::optional<Compiled> compile_conv(const hlo::Op& op) { return compile_conv_impl(op, false, {}); }

}  // namespace

std::optional<Compiled> compile_conv_rhs_reversed(const hlo::Op& conv) {
  if (conv.kind != hlo::OpKind::kConvolution || conv.operands.size() != 2) return std::nullopt;
  const hlo::Op* rev = conv.operand(1)->def;
  auto* cd = conv.attrs.get_if<hlo::ConvDims>("dimension_numbers");
  if (!rev || rev->kind != hlo::OpKind::kReverse || !cd) return std::nullopt;
  hlo::I64s dims = i64s_attr(*rev, "dimensions"), want = cd->kernel_spatial;
  std::sort(dims.begin(), dims.end());
  std::sort(want.begin(), want.end());
  if (dims != want) return std::nullopt;
  return compile_conv_impl(conv, true, {});
}

ConvBlocks conv_blockable_roles(const hlo::Op& conv, int B) {
  ConvBlocks r;
  std::optional<ConvGeom> g = conv_geom(conv);
  // bf16 operands (mixed precision) stay row-major: the planner's layouts are f32 only.
  if (!g || B <= 0 || g->ns != 2 || g->groups != 1 || g->user != dt::f32) return r;
  if (conv.attrs.get_int_or("batch_group_count", 1) != 1) return r;
  const hlo::ConvDims& cd = g->d;
  // Blockable: the tensor's own dims are oneDNN's (N, C, H, W) for its role, C % B == 0.
  auto ok = [&](const hlo::Type& t, std::vector<int64_t> order) {
    return t.shape().size() == 4 && t.dim(1) % B == 0 && order == std::vector<int64_t>{0, 1, 2, 3};
  };
  auto with = [](int64_t a, int64_t b, const hlo::I64s& sp) {
    std::vector<int64_t> o{a, b};
    o.insert(o.end(), sp.begin(), sp.end());
    return o;
  };
  if (bwd_weights_form(conv, *g, 1)) {
    r.x =
        ok(conv.operand_type(0), with(cd.input_feature, cd.input_batch, cd.input_spatial)) ? B : 0;
    r.w = ok(conv.operand_type(1),
             with(cd.kernel_input_feature, cd.kernel_output_feature, cd.kernel_spatial))
              ? B
              : 0;
    return r;
  }
  r.x = ok(conv.operand_type(0), with(cd.input_batch, cd.input_feature, cd.input_spatial)) ? B : 0;
  r.y =
      ok(conv.result(0)->type, with(cd.output_batch, cd.output_feature, cd.output_spatial)) ? B : 0;
  return r;
}

std::optional<Compiled> compile_conv_affine(const hlo::Op& conv, bool rhs_reversed, ConvBlocks b,
                                            bool relu) {
  std::optional<ConvGeom> g = conv_geom(conv);
  if (!g || g->user != dt::f32 || conv.attrs.get_int_or("batch_group_count", 1) != 1 ||
      bwd_weights_form(conv, *g, 1))
    return std::nullopt;
  for (int64_t d : g->lhs_dil)
    if (d != 1) return std::nullopt;
  std::optional<ConvLayout> L = conv_layout(conv, *g);
  if (!L) return std::nullopt;
  return compile_conv_direct(*g, *L, rhs_reversed, b, ConvPostOps{true, relu});
}

std::optional<Compiled> compile_conv_blocked(const hlo::Op& conv, bool rhs_reversed, ConvBlocks b) {
  if (rhs_reversed) {
    const hlo::Op* rev = conv.operand(1)->def;
    if (!rev || rev->kind != hlo::OpKind::kReverse) return std::nullopt;
  }
  return compile_conv_impl(conv, rhs_reversed, b);
}

void register_conv(Compiler* t) {
  hlo::FamilyTable<Compiler> ft(t, "conv.cpp", {"conv"});
  ft.set(hlo::OpKind::kConvolution, compile_conv);
}

}  // namespace netspec::exec::cpu
