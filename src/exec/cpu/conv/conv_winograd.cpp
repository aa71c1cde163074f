// netspec's own Winograd convolutions (winograd.h) as compiled steps: the operands reordered to
// the kernels' channel blocks where they are not stored so (conv_sides.h), the plan's scratch
// after them.
#include <cstdlib>

#include "core/thread_pool.h"
#include "exec/cpu/conv/conv_sides.h"

namespace netspec::exec::cpu {
namespace {

// An operand stored as `user`, read (input) or written (output) by the kernels as nChw{B}c.
Side blocked_side(const dnnl::memory::desc& user, bool input, int B) {
  const dnnl::memory::desc b = blocked_md(user.dims(), B);
  return input ? Side::input(user, b) : Side::output(user, b);
}

// nChw16c where the 16-lane transforms run and both channel counts divide into 16 blocks (the
// planner's AVX-512 layout: no reorders around the kernels), else nChw8c.
WinogradShape with_block(WinogradShape s) {
  s.block = winograd_avx512_products() && s.C % 16 == 0 && s.O % 16 == 0 ? 16 : 8;
  return s;
}

}  // namespace

std::optional<Compiled> compile_own_winograd(const WinogradShape& s, const WinogradWeights& w,
                                             int64_t w_base, const dnnl::memory::desc& x_user,
                                             const dnnl::memory::desc& y_user) {
  if (std::abs(w.o) * 15 > INT32_MAX) return std::nullopt;  // the gathers' 32-bit lane offsets
  const WinogradPlan plan = plan_winograd(with_block(s), w, ThreadPool::global().num_threads());
  const int B = static_cast<int>(plan.s.block);
  Side xs = blocked_side(x_user, true, B), ys = blocked_side(y_user, false, B);
  const size_t plan_off = place_sides({&xs, &ys}, 0);
  Compiled c;
  c.scratch_bytes = plan_off + plan.scratch_bytes;
  c.winograd = true;
  // Weights unchanged between calls (an evaluation session's parameters, a module constant) are
  // transformed once and kept: at batch 1 the transform of a 512 -> 512 kernel (36 C O floats)
  // costs more than the products.
  c.keeps = true;
  c.run = [=](const RunArgs& a) {
    const void* xp = xs.in(a.in[0]->raw(), a.scratch);
    void* yp = ys.out(a.out[0]->raw(), a.scratch);
    const float* w = a.in[1]->data<float>() + w_base;
    const float* u = nullptr;
    if (const uint64_t gen = a.gen(1); gen != 0 && a.kept) {
      KeptCopy& k = *a.kept;
      if (k.gen != gen) {
        plan.transform_weights(w, reinterpret_cast<float*>(k.get(plan.u_bytes())));
        k.refreshed(gen);
      }
      u = reinterpret_cast<const float*>(k.data.get());
    }
    dnnl_stream().wait();
    plan.run(static_cast<const float*>(xp), w, static_cast<float*>(yp), a.scratch + plan_off, u);
    ys.finish(a.out[0]->raw(), a.scratch);
    dnnl_stream().wait();
  };
  return c;
}

std::optional<Compiled> compile_own_winograd_grad(const WinogradShape& s, const WinogradWeights& dw,
                                                  const dnnl::memory::desc& x_user,
                                                  const dnnl::memory::desc& dy_user) {
  if (s.C % 16 != 0 || s.O % 8 != 0) return std::nullopt;
  const WinogradGradPlan plan =
      plan_winograd_grad(with_block(s), dw, ThreadPool::global().num_threads());
  const int B = static_cast<int>(plan.s.block);
  Side xs = blocked_side(x_user, true, B), ds = blocked_side(dy_user, true, B);
  const size_t plan_off = place_sides({&xs, &ds}, 0);
  Compiled c;
  c.scratch_bytes = plan_off + plan.scratch_bytes;
  c.winograd = true;
  c.run = [=](const RunArgs& a) {
    const void* xp = xs.in(a.in[0]->raw(), a.scratch);
    const void* dp = ds.in(a.in[1]->raw(), a.scratch);
    dnnl_stream().wait();
    plan.run(static_cast<const float*>(xp), static_cast<const float*>(dp), a.out[0]->data<float>(),
             a.scratch + plan_off);
  };
  return c;
}

}  // namespace netspec::exec::cpu
