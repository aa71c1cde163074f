// Layout propagation in the cpu planner. With a block size B (16 on AVX-512 CPUs, 8 on AVX2,
// chosen at run time), rank-4 [N, C, H, W] values with C % B == 0 may be stored channel-blocked
// as oneDNN's nChw{B}c ([N, C/B, H, W, B], same bytes). Convolutions read and write that layout
// directly; elementwise ops and fused groups (per-channel broadcasts indexed for the layout),
// BN's per-channel reductions, pooling, and channel slices and concatenates on block boundaries
// (DenseNet's) run on it; every other reader gets a row-major copy
// made once by a reorder step (shared by all its readers, e.g. one dy reorder for the dx and dW
// convolutions). Function results, tuples and values read inside regions are row-major.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/thread_pool.h"
#include "exec/cpu/dnnl_util.h"
#include "exec/cpu/plan/plan.h"
#include "exec/scalar_ops.h"

namespace netspec::exec::cpu {
namespace {

using hlo::OpKind;

// Row-major [N, C, HW] <-> blocked [N, C/B, HW, B] for elements of type T (f32 as u32, i1 as u8).
template <typename T>
void reorder_elems(const T* src, T* dst, int64_t N, int64_t C, int64_t HW, int64_t B,
                   bool to_blocked) {
  const int64_t CB = C / B;
  parallel_for(N * CB, std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(HW * B, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t p = b; p < e; ++p) {
                   const int64_t n = p / CB, cb = p % CB;
                   const int64_t pb = p * HW * B, pp = (n * C + cb * B) * HW;
                   if (to_blocked) {
                     for (int64_t hw = 0; hw < HW; ++hw)
                       for (int64_t l = 0; l < B; ++l) dst[pb + hw * B + l] = src[pp + l * HW + hw];
                   } else {
                     for (int64_t l = 0; l < B; ++l)
                       for (int64_t hw = 0; hw < HW; ++hw)
                         dst[pp + l * HW + hw] = src[pb + hw * B + l];
                   }
                 }
               });
}

void reorder_tensor(const Tensor& src, Tensor& dst, int B, bool to_blocked) {
  const Shape& s = src.shape();
  const int64_t N = s[0], C = s[1], HW = s[2] * s[3];
  if (dtype_size(src.dtype()) == 4)
    reorder_elems(src.data<uint32_t>(), dst.data<uint32_t>(), N, C, HW, B, to_blocked);
  else
    reorder_elems(src.data<uint8_t>(), dst.data<uint8_t>(), N, C, HW, B, to_blocked);
}

Compiled compile_reorder(int B, bool to_blocked) {
  Compiled c;
  c.run = [B, to_blocked](const RunArgs& a) { reorder_tensor(*a.in[0], *a.out[0], B, to_blocked); };
  return c;
}

// A reorder step of value `in` (dir +B: to blocked, -B: to row-major) serving op.
int add_reorder(Plan& P, int in, int dir, const hlo::Op& op) {
  Step st;
  st.op = &op;
  st.kind = StepKind::kFast;
  st.reorder = dir;
  st.ins = {in};
  const hlo::Type t = P.vals[static_cast<size_t>(in)].type;
  int out = add_val(P, t);
  P.vals[static_cast<size_t>(out)].block = dir > 0 ? dir : 0;
  st.outs = {out};
  st.compiled = compile_reorder(dir > 0 ? dir : -dir, dir > 0);
  if (P.profile)
    st.label = fmt::format(
        "reorder {} {} (for {})", t.str(),
        dir > 0 ? fmt::format("nchw -> nChw{}c", dir) : fmt::format("nChw{}c -> nchw", -dir),
        op_mnemonic(op.kind));
  ++P.stats.reorders;
  P.steps.push_back(std::move(st));
  return out;
}

bool blocked_now(Plan& P, const hlo::Value* v) {
  int id = use_of(P, v);
  return id >= 0 && (P.vals[static_cast<size_t>(id)].block > 0 || P.blocked_copy.count(v));
}

// Every operand has a plan value that is not a tuple (else the op is planned the usual way).
bool operands_bound(Plan& P, const hlo::Op& op, const hlo::Op* absorbed_reverse) {
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const hlo::Value* v = op.operand(i);
    if (absorbed_reverse && i == 1) v = absorbed_reverse->operand(0);
    int id = use_of(P, v);
    if (id < 0 || P.vals[static_cast<size_t>(id)].src == Src::kTuple) return false;
  }
  return true;
}

// The single op of a reduce body `(a, b) -> op(a, b)` (or swapped), or nullopt.
std::optional<OpKind> reduce_body(const hlo::Op& op) {
  if (op.regions.size() != 1) return std::nullopt;
  const hlo::Block& b = *op.region(0);
  if (b.args.size() != 2 || b.ops.size() != 2 || b.ops[1]->kind != OpKind::kReturn)
    return std::nullopt;
  const hlo::Op& f = *b.ops[0];
  if (f.operands.size() != 2 || b.ops[1]->operands.size() != 1 ||
      b.ops[1]->operand(0) != f.result())
    return std::nullopt;
  const bool args = (f.operand(0) == b.arg(0) && f.operand(1) == b.arg(1)) ||
                    (f.operand(0) == b.arg(1) && f.operand(1) == b.arg(0));
  if (!args) return std::nullopt;
  if (f.kind == OpKind::kAdd || f.kind == OpKind::kMaximum || f.kind == OpKind::kMinimum)
    return f.kind;
  return std::nullopt;
}

// out[n?, c] = fold over (n?, h, w) in row-major order of x[n, c, h, w] (the ref kernel's order
// per output), B channels of one block at a time as one vector.
template <int B, OpKind K>
Compiled make_reduce_blocked(int64_t N, int64_t C, int64_t HW, bool over_n) {
  Compiled c;
  c.run = [=](const RunArgs& a) {
    const float* x = a.in[0]->data<float>();
    const float init = a.in[1]->data<float>()[0];
    float* o = a.out[0]->data<float>();
    const int64_t CB = C / B, tasks = over_n ? CB : N * CB;
    parallel_for(tasks, 1, [&](int64_t tb, int64_t te) {
      for (int64_t t = tb; t < te; ++t) {
        float acc[B];
        for (int l = 0; l < B; ++l) acc[l] = init;
        const int64_t n0 = over_n ? 0 : t / CB, n1 = over_n ? N : n0 + 1;
        const int64_t cb = t % CB;
        for (int64_t n = n0; n < n1; ++n) {
          const float* p = x + (n * CB + cb) * HW * B;
          for (int64_t hw = 0; hw < HW; ++hw)
            for (int l = 0; l < B; ++l) acc[l] = Scalar<K>::apply(acc[l], p[hw * B + l]);
        }
        float* out = o + (over_n ? cb * B : (n0 * CB + cb) * B);
        for (int l = 0; l < B; ++l) out[l] = acc[l];
      }
    });
  };
  return c;
}

template <int B>
std::optional<Compiled> reduce_blocked_for(OpKind k, int64_t N, int64_t C, int64_t HW, bool n) {
  switch (k) {
    case OpKind::kAdd:
      return make_reduce_blocked<B, OpKind::kAdd>(N, C, HW, n);
    case OpKind::kMaximum:
      return make_reduce_blocked<B, OpKind::kMaximum>(N, C, HW, n);
    case OpKind::kMinimum:
      return make_reduce_blocked<B, OpKind::kMinimum>(N, C, HW, n);
    default:
      return std::nullopt;
  }
}

}  // namespace

int layout_block_size() {
  if (const char* e = std::getenv("NETSPEC_CPU_LAYOUT"); e && *e) {
    std::string_view s(e);
    if (s == "plain" || s == "0") return 0;
    if (s == "8" || s == "nChw8c") return 8;
    if (s == "16" || s == "nChw16c") return 16;
    fail("cpu", "NETSPEC_CPU_LAYOUT is not a layout (got '{}', expected plain, 8 or 16)", s);
  }
  if (const char* e = std::getenv("NETSPEC_CONV_PLAIN"); e && *e) return 0;
  static const int by_cpu = onednn_has_isa(dnnl::cpu_isa::avx512_core) ? 16
                            : onednn_has_isa(dnnl::cpu_isa::avx2)      ? 8
                                                                       : 0;
  return by_cpu;
}

bool blockable(const Plan& P, const hlo::Type& t) {
  return P.chan_block > 0 && t.is_tensor() && t.shape().size() == 4 && t.numel() > 0 &&
         (t.dtype() == DType::kF32 || t.dtype() == DType::kI1) && t.dim(1) % P.chan_block == 0;
}

int want_plain(Plan& P, const hlo::Value* v, const hlo::Op& op) {
  int id = use_of(P, v);
  if (id < 0 || P.vals[static_cast<size_t>(id)].block == 0) return id;
  if (auto it = P.plain_copy.find(v); it != P.plain_copy.end()) return it->second;
  int out = add_reorder(P, id, -P.vals[static_cast<size_t>(id)].block, op);
  P.plain_copy[v] = out;
  return out;
}

int want_blocked(Plan& P, const hlo::Value* v, const hlo::Op& op) {
  int id = use_of(P, v);
  if (id < 0 || P.vals[static_cast<size_t>(id)].block == P.chan_block) return id;
  if (auto it = P.blocked_copy.find(v); it != P.blocked_copy.end()) return it->second;
  if (!blockable(P, P.vals[static_cast<size_t>(id)].type))
    fail("cpu", "{} cannot be channel-blocked (planner bug)", v->type.str());
  int out = add_reorder(P, id, P.chan_block, op);
  P.blocked_copy[v] = out;
  return out;
}

void plain_for_regions(Plan& P, const hlo::Op& op) {
  for (const auto& r : op.regions)
    hlo::walk(*r, [&](const hlo::Op& inner) {
      for (auto* v : inner.operands) {
        auto it = P.ids.find(v);
        if (it == P.ids.end() || P.vals[static_cast<size_t>(it->second)].block == 0) continue;
        const int blocked = it->second;
        const int plain = want_plain(P, v, op);
        P.blocked_copy[v] = blocked;
        P.ids[v] = plain;  // region readers (scopes, captures, liveness) see the copy
      }
    });
}

bool add_blocked_step(Plan& P, const hlo::Op& op, Step& st, const Compiler* table) {
  if (P.chan_block <= 0 || op.results.size() != 1 || !all_tensors(op)) return false;
  if (!operands_bound(P, op, st.absorbed_reverse)) return false;
  const int B = P.chan_block;
  std::optional<Compiled> c;
  std::vector<int> roles(op.operands.size(), 0);  // block each operand is read in
  int out_block = 0;
  switch (op.kind) {
    case OpKind::kConvolution: {
      ConvBlocks r = conv_blockable_roles(op, B);
      if (!r.any()) return false;
      c = compile_conv_blocked(op, st.absorbed_reverse != nullptr, r);
      roles = {r.x, r.w};
      out_block = r.y;
      break;
    }
    case OpKind::kReduce:
      if (op.operands.size() != 2 || !blocked_now(P, op.operand(0))) return false;
      c = compile_reduce_blocked(op, B);
      roles = {B, 0};
      break;
    case OpKind::kReduceWindow:
      if (op.operands.size() != 2 || !blocked_now(P, op.operand(0))) return false;
      c = compile_pool_blocked(op, B);
      roles = {B, 0};
      out_block = B;
      break;
    case OpKind::kSelectAndScatter:
      if (op.operands.size() != 3 || !blocked_now(P, op.operand(0)) ||
          !blockable(P, op.operand_type(1)))
        return false;
      c = compile_pool_blocked(op, B);
      roles = {B, B, 0};
      out_block = B;
      break;
    // A channel slice or concatenate on block boundaries moves, per sample, one contiguous run
    // of whole channel blocks ((n·C + c0)·HW elements on, (c1 − c0)·HW long) in both layouts:
    // the row-major kernels copy exactly those bytes.
    case OpKind::kSlice: {  // channels [c0, c1) on block boundaries, the other dims whole
      const hlo::Type& t = op.operand_type(0);
      const hlo::Type& r = op.result(0)->type;
      if (!blocked_now(P, op.operand(0)) || !blockable(P, t) || !blockable(P, r)) return false;
      const hlo::I64s lo = i64s_attr(op, "start_indices"), st_ = i64s_attr(op, "strides");
      for (size_t d = 0; d < 4; ++d)
        if ((!st_.empty() && st_[d] != 1) || (d != 1 && (lo[d] != 0 || r.dim(d) != t.dim(d))))
          return false;
      if (lo[1] % B != 0) return false;
      c = table[static_cast<size_t>(op.kind)](op);  // the row-major kernel: see below
      roles = {B};
      out_block = B;
      break;
    }
    case OpKind::kConcatenate: {  // along channels, each operand whole blocks
      if (op.attrs.get_int("dimension") != 1 || !blockable(P, op.result(0)->type)) return false;
      bool any_blocked = false;
      for (auto* v : op.operands) {
        if (!blockable(P, v->type)) return false;
        any_blocked = any_blocked || blocked_now(P, v);
      }
      if (!any_blocked) return false;
      c = table[static_cast<size_t>(op.kind)](op);
      std::fill(roles.begin(), roles.end(), B);
      out_block = B;
      break;
    }
    default: {
      // Pointwise ops over one shape (out[j] reads only element j) run on any layout.
      const hlo::Type& r = op.result(0)->type;
      if (!op.regions.empty() || !blockable(P, r) || op.operands.empty()) return false;
      bool any_blocked = false;
      for (auto* v : op.operands) {
        if (v->type.shape() != r.shape() || !blockable(P, v->type)) return false;
        any_blocked = any_blocked || blocked_now(P, v);
      }
      Compiler comp = table[static_cast<size_t>(op.kind)];
      if (!any_blocked || !comp) return false;
      c = comp(op);
      if (c && (!c->pointwise || c->view)) c.reset();
      std::fill(roles.begin(), roles.end(), B);
      out_block = B;
    }
  }
  if (!c) return false;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const hlo::Value* v = op.operand(i);
    if (st.absorbed_reverse && i == 1) v = st.absorbed_reverse->operand(0);
    st.ins.push_back(roles[i] ? want_blocked(P, v, op) : want_plain(P, v, op));
  }
  int out = new_val(P, op.result(0));
  P.vals[static_cast<size_t>(out)].block = out_block;
  if (out_block) ++P.stats.blocked_values;
  st.outs = {out};
  st.kind = StepKind::kFast;
  st.compiled = std::move(*c);
  return true;
}

std::optional<Compiled> compile_reduce_blocked(const hlo::Op& op, int B) {
  if (op.kind != OpKind::kReduce || op.operands.size() != 2 || op.results.size() != 1)
    return std::nullopt;
  const hlo::Type& t = op.operand_type(0);
  if (t.dtype() != DType::kF32 || op.result(0)->type.dtype() != DType::kF32) return std::nullopt;
  if (t.shape().size() != 4 || (B != 8 && B != 16) || t.dim(1) % B != 0) return std::nullopt;
  std::optional<OpKind> k = reduce_body(op);
  hlo::I64s dims = i64s_attr(op, "dimensions");
  std::sort(dims.begin(), dims.end());
  const bool over_n = dims == hlo::I64s{0, 2, 3};
  if (!k || !(over_n || dims == hlo::I64s{2, 3})) return std::nullopt;
  const int64_t N = t.dim(0), C = t.dim(1), HW = t.dim(2) * t.dim(3);
  return B == 16 ? reduce_blocked_for<16>(*k, N, C, HW, over_n)
                 : reduce_blocked_for<8>(*k, N, C, HW, over_n);
}

std::optional<float> scalar_constant(const hlo::Value& v) {
  const hlo::Op* def = v.def;
  ref::Kernel k = ref::kernel_for(OpKind::kConstant);
  if (!def || def->kind != OpKind::kConstant || !k || v.type.numel() != 1) return std::nullopt;
  ref::RunContext ctx;
  return static_cast<float>(k(*def, {}, ctx).at(0).as_double(0));
}

std::optional<std::pair<float, bool>> blocked_sum_init(const hlo::Op& reduce, int B) {
  if (!compile_reduce_blocked(reduce, B) || reduce_body(reduce) != OpKind::kAdd)
    return std::nullopt;
  const std::optional<float> init = scalar_constant(*reduce.operand(1));
  if (!init) return std::nullopt;
  hlo::I64s dims = i64s_attr(reduce, "dimensions");
  std::sort(dims.begin(), dims.end());
  return std::pair{*init, dims == hlo::I64s{0, 2, 3}};
}

Tensor unblocked(const Tensor& t, int b) {
  if (b <= 0) return t;
  Tensor out(t.dtype(), t.shape());
  reorder_tensor(t, out, b, false);
  return out;
}

}  // namespace netspec::exec::cpu
