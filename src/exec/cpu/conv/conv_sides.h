// Operands prepared for a convolution kernel (conv.cpp's oneDNN primitives, netspec's own
// Winograd): descs of the planner's channel-blocked layouts, reorders between the stored layout
// and the kernel's, and their slots in the step's scratch.
#pragma once
#include <dnnl.hpp>
#include <initializer_list>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "exec/cpu/conv/winograd.h"
#include "exec/cpu/dnnl_util.h"
#include "exec/cpu/kernels.h"

namespace netspec::exec::cpu {

inline size_t scratch_align(size_t n) { return (n + 63) / 64 * 64; }

// A channel-blocked [N, C, H, W] desc (nChw16c / nChw8c; the planner's layout, layout.cpp).
inline dnnl::memory::desc blocked_md(const dnnl::memory::dims& d, int B,
                                     dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  return dnnl::memory::desc(
      d, type, B == 16 ? dnnl::memory::format_tag::nChw16c : dnnl::memory::format_tag::nChw8c);
}

// A reorder from `from` into `to` (nullptr when the descs are equal).
inline std::shared_ptr<dnnl::reorder> make_reorder(const dnnl::memory::desc& from,
                                                   const dnnl::memory::desc& to) {
  if (from == to) return nullptr;
  return std::make_shared<dnnl::reorder>(
      dnnl::reorder::primitive_desc(dnnl_engine(), from, dnnl_engine(), to));
}

// Can oneDNN reorder `from` into `to`?
inline bool can_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  if (from == to) return true;
  try {
    dnnl::reorder::primitive_desc(dnnl_engine(), from, dnnl_engine(), to);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

inline void run_reorder(const std::shared_ptr<dnnl::reorder>& r, const dnnl::memory::desc& from,
                        const void* src, const dnnl::memory::desc& to, void* dst) {
  auto& eng = dnnl_engine();
  dnnl::memory a(from, eng, const_cast<void*>(src)), b(to, eng, dst);
  r->execute(dnnl_stream(), a, b);
}

// A dense bf16 desc's f32 twin (same dims and strides), or an empty desc when `d` is not a dense
// plain bf16 layout.
inline dnnl::memory::desc widened_bf16_md(const dnnl::memory::desc& d) {
  using dt = dnnl::memory::data_type;
  const dnnl_memory_desc_t& c = d.data;
  if (d.data_type() != dt::bf16 || c.format_kind != dnnl_blocked ||
      c.format_desc.blocking.inner_nblks != 0)
    return {};
  dnnl::memory::dims dims(c.dims, c.dims + c.ndims), strides(c.format_desc.blocking.strides,
                                                             c.format_desc.blocking.strides + c.ndims);
  if (d.get_size() != static_cast<size_t>(num_elements(dims)) * 2) return {};  // padded or strided
  return dnnl::memory::desc(dims, dt::f32, strides);
}

// A tensor operand prepared for a kernel: the user desc, the kernel's desc, the reorder between
// them and its scratch offset. A dense bf16 input read by an f32 kernel is widened by netspec's
// vector loop first (into `widened`, the user layout in f32) and only then reordered: oneDNN 2.6
// has no jit reorder from bf16 into blocked f32 without AVX-512, and its reference one took ~30 ns
// a value (ddpm-unet-gn's bf16 step on an AVX2 EPYC: 2.2 of 3.3 s).
struct Side {
  dnnl::memory::desc user, prim;
  std::shared_ptr<dnnl::reorder> reorder;
  size_t offset = 0;
  dnnl::memory::desc widened;  // empty unless widening
  size_t widen_offset = 0;     // the widened copy's slot, when a reorder follows it

  // An input read by the kernel as `kernel`.
  static Side input(const dnnl::memory::desc& user, const dnnl::memory::desc& kernel) {
    Side s;
    s.user = user;
    s.prim = kernel;
    if (kernel.data_type() == dnnl::memory::data_type::f32) s.widened = widened_bf16_md(user);
    s.reorder = make_reorder(s.widening() ? s.widened : user, kernel);
    return s;
  }
  // An output written by the kernel as `kernel`.
  static Side output(const dnnl::memory::desc& user, const dnnl::memory::desc& kernel) {
    Side s;
    s.user = user;
    s.prim = kernel;
    s.reorder = make_reorder(kernel, user);
    return s;
  }

  bool widening() const { return widened.get_size() != 0; }
  // Does the kernel read or write a copy in scratch (not the user buffer)?
  bool staged() const { return reorder != nullptr || widening(); }

  // Writes input `src` in the kernel's layout into dst (prim.get_size() bytes); a widened
  // copy goes through its own slot in scratch.
  void fill(const void* src, void* dst, uint8_t* scratch) const {
    if (!widening()) return run_reorder(reorder, user, src, prim, dst);
    const int64_t n = static_cast<int64_t>(widened.get_size() / 4);
    float* w = reorder ? reinterpret_cast<float*>(scratch + widen_offset) : static_cast<float*>(dst);
    widen_bf16(static_cast<const uint16_t*>(src), w, n);
    if (reorder) run_reorder(reorder, widened, w, prim, dst);
  }
  // An input: the pointer the kernel reads (the user buffer, or its prepared copy in scratch).
  const void* in(const void* src, uint8_t* scratch) const {
    if (!staged()) return src;
    fill(src, scratch + offset, scratch);
    return scratch + offset;
  }
  // An output: where the kernel writes; `finish` reorders it into the user buffer if needed.
  void* out(void* dst, uint8_t* scratch) const { return reorder ? scratch + offset : dst; }
  void finish(void* dst, uint8_t* scratch) const {
    if (reorder) run_reorder(reorder, prim, scratch + offset, user, dst);
  }
};

// Gives each staged side its scratch slot(s) from `off` on; returns the end offset.
inline size_t place_sides(std::initializer_list<Side*> sides, size_t off) {
  for (Side* s : sides) {
    if (s->widening() && s->reorder) {
      s->widen_offset = off;
      off += scratch_align(s->widened.get_size());
    }
    s->offset = off;
    if (s->staged()) off += scratch_align(s->prim.get_size());
  }
  return off;
}

// A oneDNN convolution primitive (forward, backward data or backward weights) with its two
// input sides and its output side, each under its primitive argument id. `run` reorders the
// inputs into the kernel's layouts where they differ, executes with the plan's scratchpad slice
// at pad_off (when the primitive needs one) and reorders the output back into the user buffer;
// `extra` adds arguments (the post-ops' operands).
struct ConvPrimitive {
  std::shared_ptr<dnnl::primitive> prim;
  Side in0, in1, out;
  int arg_in0, arg_in1, arg_out;
  dnnl::memory::desc pad_md;
  size_t pad_off = 0;

  ConvPrimitive(std::shared_ptr<dnnl::primitive> p, const Side& s0, int arg0, const Side& s1,
                int arg1, const Side& o, int arg_o, const dnnl::memory::desc& pad, size_t pad_at)
      : prim(std::move(p)),
        in0(s0),
        in1(s1),
        out(o),
        arg_in0(arg0),
        arg_in1(arg1),
        arg_out(arg_o),
        pad_md(pad),
        pad_off(pad_at) {}

  // in1_ready: src1 is already in in1's kernel layout (a kept copy), so no reorder runs.
  void run(const void* src0, const void* src1, void* dst, uint8_t* scratch,
           std::unordered_map<int, dnnl::memory> extra = {}, bool in1_ready = false) const {
    auto& e = dnnl_engine();
    const void* p0 = in0.in(src0, scratch);
    const void* p1 = in1_ready ? src1 : in1.in(src1, scratch);
    extra.insert({arg_in0, dnnl::memory(in0.prim, e, const_cast<void*>(p0))});
    extra.insert({arg_in1, dnnl::memory(in1.prim, e, const_cast<void*>(p1))});
    extra.insert({arg_out, dnnl::memory(out.prim, e, out.out(dst, scratch))});
    if (pad_md.get_size() != 0)
      extra.insert({DNNL_ARG_SCRATCHPAD, dnnl::memory(pad_md, e, scratch + pad_off)});
    prim->execute(dnnl_stream(), extra);
    out.finish(dst, scratch);
    dnnl_stream().wait();
  }
};

// netspec's own Winograd convolutions (winograd.h) on operands stored as x_user / y_user / dy_user
// (reordered to nChw8c in scratch unless stored so) — conv_winograd.cpp.
// y = conv(x, w), w[o, c, ky, kx] at operand 1's data + w_base + the strides in `w`.
std::optional<Compiled> compile_own_winograd(const WinogradShape& s, const WinogradWeights& w,
                                             int64_t w_base, const dnnl::memory::desc& x_user,
                                             const dnnl::memory::desc& y_user);
// dW (the result, written through `dw`'s strides) from x (operand 0) and dy (operand 1).
std::optional<Compiled> compile_own_winograd_grad(const WinogradShape& s, const WinogradWeights& dw,
                                                  const dnnl::memory::desc& x_user,
                                                  const dnnl::memory::desc& dy_user);

// A depthwise convolution's weight gradient dW[c, kh, kw] from x (operand 0) and dy (operand 1),
// on netspec's own kernel (depthwise_grad.cpp): for the kernels oneDNN's jit_dw does not take.
// Element strides of x and dy as (sample, channel, row, column), of dW as (channel, kh, kw);
// s: the forward's stride, d: its dilation, p: its low padding (the high padding follows).
struct DepthwiseGradShape {
  int64_t N, C, H, W, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw;
  int64_t x_n, x_c, x_h, x_w, dy_n, dy_c, dy_h, dy_w, w_c, w_h, w_w;
};
std::optional<Compiled> compile_depthwise_weight_grad(const DepthwiseGradShape& s);

}  // namespace netspec::exec::cpu
