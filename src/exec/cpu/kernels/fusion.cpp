// Elementwise loop fusion for the cpu executor. Chains of f32 elementwise ops over one shape (the
// optimizer tails, BN normalisation, activations and their VJPs) are grouped at plan time and
// run as one kernel: the domain is cut into tiles of kTile elements, each tile runs the group's
// ops one after another on small per-thread buffers (L1/L2 resident) and writes only the values
// used outside the group. Scalar and "row/column" broadcasts feeding the group are read in place
// instead of being materialised. Per element the math is exec/scalar_ops.h, as in the unfused
// kernels, so results equal them; exp, log, tanh and logistic use the vector kernels of vmath.h
// (within 2 ulp of scalar_ops.h), as the unfused f32 kernels do.
//
// Which ops form a group is fusion_groups.cpp's. Groups whose outputs are reduced (BN's sums,
// LayerNorm's and softmax's rows) run in fusion_reduce.cpp.
// sqrt vectorises because the cpu executor is built with -fno-math-errno (CMakeLists.txt).
#pragma GCC target("prefer-vector-width=512")
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "core/thread_pool.h"
#include "exec/cpu/kernels.h"
#include "exec/cpu/kernels/fusion_program.h"
#include "exec/cpu/kernels/vmath.h"
#include "exec/scalar_ops.h"

namespace netspec::exec::cpu {
namespace fused {

using hlo::OpKind;
using hlo::Value;

// The kinds a group may hold besides compare, select, clamp, convert, broadcast_in_dim and the i1
// and/or/not: their math is Scalar<K>::apply on f32 (exec/scalar_ops.h), the same inline code as
// the unfused kernels.
// clang-format off
#define FUSED_UNARY_KINDS(X) \
  X(kNegate) X(kAbs) X(kExponential) X(kExponentialMinusOne) X(kLog) X(kLogPlusOne) X(kLogistic) \
  X(kTanh) X(kErf) X(kSqrt) X(kRsqrt)
#define FUSED_BINARY_KINDS(X) X(kAdd) X(kSubtract) X(kMultiply) X(kDivide) X(kMaximum) X(kMinimum)
// clang-format on


std::optional<BcastMap> bcast_map(const hlo::Op& op) {
  const Shape& in = op.operand_type(0).shape();
  const Shape& out = op.result(0)->type.shape();
  hlo::I64s bd = i64s_attr(op, "broadcast_dimensions");
  if (bd.size() != in.size()) return std::nullopt;
  // Result dims that carry operand data (operand size-1 dims broadcast too).
  std::vector<int64_t> kept;
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k] != 1) {
      if (in[k] != out[static_cast<size_t>(bd[k])]) return std::nullopt;
      if (!kept.empty() && bd[k] <= kept.back()) return std::nullopt;  // transposing
      kept.push_back(bd[k]);
    }
  BcastMap m;
  m.size = num_elements(in);
  if (kept.empty()) return m;  // scalar
  auto inner_of = [&](int64_t last) {
    int64_t v = 1;
    for (size_t d = static_cast<size_t>(last) + 1; d < out.size(); ++d) v *= out[d];
    return v;
  };
  size_t split = kept.size();  // kept[split..] is the inner run
  for (size_t i = kept.size() - 1; i > 0; --i)
    if (kept[i] != kept[i - 1] + 1) {
      if (split != kept.size()) return std::nullopt;  // more than two runs
      split = i;
    }
  m.inner = inner_of(kept.back());
  if (split == kept.size()) return m;
  m.size = 1;
  for (size_t i = split; i < kept.size(); ++i) m.size *= out[static_cast<size_t>(kept[i])];
  m.outer_size = num_elements(in) / m.size;
  m.outer_inner = inner_of(kept[split - 1]);
  return m;
}

std::optional<CmpDir> fused_cmp_dir(const hlo::Op& op) {
  auto* dir = op.attrs.get_if<hlo::EnumAttr>("comparison_direction");
  if (!dir) return std::nullopt;
  if (auto* c = op.attrs.get_if<hlo::EnumAttr>("compare_type"))
    if (!(c->value.empty() || c->value == "FLOAT")) return std::nullopt;
  return cmp_dir(dir->value);
}

bool is_f32(const hlo::Type& t) { return t.is_tensor() && t.dtype() == DType::kF32; }
bool is_i1(const hlo::Type& t) { return t.is_tensor() && t.dtype() == DType::kI1; }

// Can `op` be a group member (f32 values, i1 masks)?
bool fusable(const hlo::Op& op) {
  if (op.results.size() != 1 || !op.regions.empty() || !all_tensors(op)) return false;
  const hlo::Type& r = op.result(0)->type;
  if (r.numel() == 0) return false;
  auto same_shape = [&](size_t i) { return op.operand_type(i).shape() == r.shape(); };
  switch (op.kind) {
#define CASE(KIND) case OpKind::KIND:
    FUSED_BINARY_KINDS(CASE)
    return is_f32(r) && is_f32(op.operand_type(0)) && is_f32(op.operand_type(1)) && same_shape(0) &&
           same_shape(1);
    FUSED_UNARY_KINDS(CASE)
    return is_f32(r) && is_f32(op.operand_type(0)) && same_shape(0);
#undef CASE
    case OpKind::kCompare:
      return is_i1(r) && is_f32(op.operand_type(0)) && is_f32(op.operand_type(1)) &&
             same_shape(0) && same_shape(1) && fused_cmp_dir(op);
    case OpKind::kSelect:
      return is_f32(r) && is_i1(op.operand_type(0)) && same_shape(0) && same_shape(1) &&
             same_shape(2);
    case OpKind::kClamp:  // clamp(lo, x, hi); GELU's erf clamps to [-4, 4] with splats
      return is_f32(r) && is_f32(op.operand_type(0)) && is_f32(op.operand_type(1)) &&
             is_f32(op.operand_type(2)) && same_shape(0) && same_shape(1) && same_shape(2);
    case OpKind::kAnd:  // i1 masks (0/1 floats inside a group): and = min, or = max, not = 1 - a
    case OpKind::kOr:
      return is_i1(r) && is_i1(op.operand_type(0)) && is_i1(op.operand_type(1)) && same_shape(0) &&
             same_shape(1);
    case OpKind::kNot:
      return is_i1(r) && is_i1(op.operand_type(0)) && same_shape(0);
    case OpKind::kConvert:  // f32 -> f32 copies; i1 masks are 0/1 floats inside a group
      return is_f32(r) && same_shape(0) &&
             (is_f32(op.operand_type(0)) || is_i1(op.operand_type(0)));
    case OpKind::kBroadcastInDim:
      return is_f32(r) && is_f32(op.operand_type(0)) && bcast_map(op).has_value();
    default:
      return false;
  }
}


// Slots are whole tiles, so d and an operand either coincide (in place) or do not overlap:
// ivdep tells GCC the vector loop is safe in both cases (no runtime overlap check needed).
template <typename F>
void unary(float* d, const float* a, int64_t n, F f) {
#pragma GCC ivdep
  for (int64_t j = 0; j < n; ++j) d[j] = f(a[j]);
}
template <typename F>
void binary(float* d, const float* a, const float* b, int64_t n, F f) {
#pragma GCC ivdep
  for (int64_t j = 0; j < n; ++j) d[j] = f(a[j], b[j]);
}
// binary with operand a and/or b a scalar (sa / sb): the same f on the same values.
template <typename F>
void binary(float* d, const float* a, const float* b, int64_t n, bool sa, bool sb, F f) {
  if (sa && sb) {
    const float v = f(a[0], b[0]);
    for (int64_t j = 0; j < n; ++j) d[j] = v;
  } else if (sa) {
    const float x = a[0];
#pragma GCC ivdep
    for (int64_t j = 0; j < n; ++j) d[j] = f(x, b[j]);
  } else if (sb) {
    const float y = b[0];
#pragma GCC ivdep
    for (int64_t j = 0; j < n; ++j) d[j] = f(a[j], y);
  } else {
    binary(d, a, b, n, f);
  }
}

// clamp(lo, x, hi) = min(max(x, lo), hi) (scalar_ops.h), lo and/or hi scalars (sl / sh).
void clamp(float* d, const float* lo, const float* x, const float* hi, int64_t n, bool sl,
           bool sh) {
  auto f = [](float l, float v, float h) { return Scalar<OpKind::kClamp>::apply(l, v, h); };
  if (sl && sh) {
    const float l = lo[0], h = hi[0];
#pragma GCC ivdep
    for (int64_t j = 0; j < n; ++j) d[j] = f(l, x[j], h);
  } else {
#pragma GCC ivdep
    for (int64_t j = 0; j < n; ++j) d[j] = f(lo[sl ? 0 : j], x[j], hi[sh ? 0 : j]);
  }
}

// A channel broadcast into a channel-blocked tile: element i reads channel
// ((i / B / inner) % (size / B)) * B + i % B, so each run of inner * B elements repeats the
// B values of one channel block (tiles and runs start at multiples of B).
template <int64_t B>
void blocked_channels(float* d, const float* src, int64_t off, int64_t n, int64_t inner,
                      int64_t size) {
  const int64_t run = inner * B;
  for (int64_t j = 0; j < n;) {
    const int64_t i = off + j;
    const float* s = src + ((i / run) % (size / B)) * B;
    const int64_t len = std::min(n - j, run - i % run);
    int64_t k = 0;
    if (i % B == 0)
      for (; k + B <= len; k += B)
        for (int64_t l = 0; l < B; ++l) d[j + k + l] = s[l];
    for (; k < len; ++k) d[j + k] = s[(i + k) % B];
    j += len;
  }
}

// `runs` runs of K copies of src[q], src[q + 1], ... (wrapping at size): a per-row value spread
// over a short last dim (Mamba's Δ and x over the state dim of 16, row maxima over short rows).
// K fixed at compile time makes each run one vector store instead of a loop with a tail.
template <int K>
void fill_runs(float* d, const float* src, int64_t q, int64_t size, int64_t runs) {
  for (int64_t j = 0; j < runs; ++j) {
    const float v = src[q];
    for (int k = 0; k < K; ++k) d[j * K + k] = v;
    if (++q == size) q = 0;
  }
}

// Elements [off, off + n) of a one-run broadcast (BcastMap) of src into d.
void broadcast_run(float* d, const float* src, int64_t off, int64_t n, int64_t inner,
                   int64_t size) {
  if (inner == 1) {  // rows: the operand repeats with period `size`
    const int64_t q = off % size, head = std::min(n, size - q);
    std::memcpy(d, src + q, static_cast<size_t>(head) * sizeof(float));
    if (head == n) return;
    const int64_t rows = std::min(n - head, size);  // then one whole period
    std::memcpy(d + head, src, static_cast<size_t>(rows) * sizeof(float));
    // d[j] = d[j - size] from here: copy what is written so far (whole periods) forward,
    // doubling, so short rows take log(n / size) copies instead of n / size
    for (int64_t j = head + rows; j < n;) {
      const int64_t len = std::min(n - j, ((j - head) / size) * size);
      std::memcpy(d + j, d + head, static_cast<size_t>(len) * sizeof(float));
      j += len;
    }
    return;
  }
  // runs of `inner` copies of each operand element
  int64_t q = (off / inner) % size, r = off % inner;
  if (r == 0 && n % inner == 0) {  // whole runs (tiles start at multiples of short runs)
    if (inner == 16) return fill_runs<16>(d, src, q, size, n / 16);
    if (inner == 8) return fill_runs<8>(d, src, q, size, n / 8);
  }
  for (int64_t j = 0; j < n;) {
    int64_t len = std::min(n - j, inner - r);
    std::fill(d + j, d + j + len, src[q]);
    j += len;
    r = 0;
    if (++q == size) q = 0;
  }
}

// (fusion_program.h)
void run_instr(const Program& p, const Instr& in, const RunArgs& args,
               const std::vector<const float*>& in_f, float* const* slot_ptr, int64_t off,
               int64_t n) {
  auto ref = [&](int r) -> const float* {
    return r >= 0 ? slot_ptr[r] : in_f[static_cast<size_t>(-r - 1)] + off;
  };
  float* d = slot_ptr[in.dst];
  if (in.pre != OpKind::kConvert) {
    run_chained(in, d, ref(in.pa), ref(in.pb), ref(in.a), n);
    return;
  }
  if (in.fold) {
    run_folded(in, d, ref(in.fold == 2 ? in.a : in.b),
               args.in[static_cast<size_t>(-in.fsrc - 1)]->data<float>(), off, n);
    return;
  }
  switch (in.op) {
#define RUN_BINARY(KIND)                                                      \
  case OpKind::KIND:                                                          \
    binary(d, ref(in.a), ref(in.b), n, in.scalar_a, in.scalar_b,              \
           [](float x, float y) { return Scalar<OpKind::KIND>::apply(x, y); }); \
    break;
#define RUN_UNARY(KIND)                                                             \
  case OpKind::KIND:                                                                \
    if (in.vec)                                                                     \
      in.vec(d, ref(in.a), n);                                                      \
    else                                                                            \
      unary(d, ref(in.a), n, [](float x) { return Scalar<OpKind::KIND>::apply(x); }); \
    break;
    FUSED_BINARY_KINDS(RUN_BINARY)
    FUSED_UNARY_KINDS(RUN_UNARY)
#undef RUN_BINARY
#undef RUN_UNARY
    case OpKind::kCompare:  // masks are 0/1 floats inside a group
      with_cmp_dir(in.dir, [&](auto dir) {
        binary(d, ref(in.a), ref(in.b), n, in.scalar_a, in.scalar_b,
               [](float x, float y) { return compare<decltype(dir)::value>(x, y) ? 1.f : 0.f; });
      });
      break;
    case OpKind::kClamp:
      clamp(d, ref(in.a), ref(in.b), ref(in.c), n, in.scalar_a, in.scalar_c);
      break;
    case OpKind::kAnd:  // 0/1 floats
      binary(d, ref(in.a), ref(in.b), n, in.scalar_a, in.scalar_b,
             [](float x, float y) { return std::min(x, y); });
      break;
    case OpKind::kOr:
      binary(d, ref(in.a), ref(in.b), n, in.scalar_a, in.scalar_b,
             [](float x, float y) { return std::max(x, y); });
      break;
    case OpKind::kNot:
      unary(d, ref(in.a), n, [](float x) { return 1.f - x; });
      break;
    case OpKind::kSelect: {
      const float *c = ref(in.a), *x = ref(in.b), *y = ref(in.c);
#pragma GCC ivdep
      for (int64_t j = 0; j < n; ++j) d[j] = c[j] != 0.f ? x[j] : y[j];
      break;
    }
    case OpKind::kConvert:
      if (in.a < 0 && p.in_is_i1[static_cast<size_t>(-in.a - 1)]) {
        const bool* src = args.in[static_cast<size_t>(-in.a - 1)]->data<bool>() + off;
        for (int64_t j = 0; j < n; ++j) d[j] = src[j] ? 1.f : 0.f;
      } else {
        std::memcpy(d, ref(in.a), static_cast<size_t>(n) * sizeof(float));
      }
      break;
    case OpKind::kBroadcastInDim: {
      const float* src = args.in[static_cast<size_t>(-in.a - 1)]->data<float>();
      const int64_t inner = in.map.inner, size = in.map.size;
      if (size == 1) {
        std::fill(d, d + kTile, src[0]);
      } else if (in.map.block == 16) {
        blocked_channels<16>(d, src, off, n, inner, size);
      } else if (in.map.block == 8) {
        blocked_channels<8>(d, src, off, n, inner, size);
      } else if (in.map.outer_inner > 0) {  // two runs: one operand block per outer stretch
        const int64_t oi = in.map.outer_inner, os = in.map.outer_size;
        for (int64_t j = 0; j < n;) {
          const int64_t i = off + j, len = std::min(n - j, oi - i % oi);
          broadcast_run(d + j, src + ((i / oi) % os) * size, i, len, inner, size);
          j += len;
        }
      } else {
        broadcast_run(d, src, off, n, inner, size);
      }
      break;
    }
    default:
      fail("cpu fusion", "{} is not a fusable op", op_name(in.op));
  }
}

// (fusion_program.h)
void run_tile(const Program& p, const RunArgs& args, const std::vector<const float*>& in_f,
              float* const* slot_ptr, int64_t off, int64_t n, bool& pinned_done,
              const TilePrefetch& pf) {
  if (p.jit) return run_jit_tile(p, args, in_f, slot_ptr, off, n, pinned_done);
  // The prefetched lines are spread over the instructions: issued all at once before the tile,
  // they stalled the passes behind them, and the memory sat idle while the passes ran on L1
  // (bench_fusion's BN+add+ReLU over 51 MiB on a Zen 1: 23 -> 17.5 ms on one core, 13 -> 10
  // on two).
  const int64_t lines = pf.full ? (pf.n + 15) / 16 : 0, steps = std::ssize(p.code);
  int64_t fetched = 0;
  auto prefetch_upto = [&](int64_t done) {
    for (const int64_t upto = lines * done / steps; fetched < upto; ++fetched)
      for (const float* f : *pf.full) __builtin_prefetch(f + pf.off + fetched * 16);
  };
  for (int64_t k = 0; k < steps; ++k) {
    if (lines) prefetch_upto(k + 1);
    const Instr& in = p.code[static_cast<size_t>(k)];
    const bool pinned = in.op == OpKind::kBroadcastInDim && in.map.size == 1;
    if ((pinned && pinned_done) || in.skip) continue;
    run_instr(p, in, args, in_f, slot_ptr, off, n);
  }
  pinned_done = true;
}

std::vector<const float*> f32_inputs(const Program& p, const RunArgs& args) {
  std::vector<const float*> in_f(p.in_is_i1.size());
  for (size_t k = 0; k < in_f.size(); ++k)
    in_f[k] = p.in_is_i1[k] ? nullptr : args.in[k]->data<float>();
  return in_f;
}

std::vector<float> tile_buffer(const Program& p) {
  return std::vector<float>(static_cast<size_t>(std::max(p.slots, 1)) * kTile + 32);
}

// Slots start on 64-byte lines (a vector's malloc gives 16): a 16-lane vector at an aligned tile
// position then never splits over two cache lines (every one did, costing resnet50's BN groups
// ~10 % with the 16-lane generated code).
std::vector<float*> slot_pointers(const Program& p, std::vector<float>& buf) {
  std::vector<float*> ptr(static_cast<size_t>(std::max(p.slots, 1)));
  const uintptr_t at = reinterpret_cast<uintptr_t>(buf.data());
  float* base = buf.data() + ((64 - at % 64) % 64) / sizeof(float);
  for (size_t s = 0; s < ptr.size(); ++s) ptr[s] = base + static_cast<int64_t>(s) * kTile;
  return ptr;
}

std::vector<bool> direct_outputs(const Program& p, const RunArgs& args, Tensor* const* out) {
  std::vector<bool> direct(p.outs.size(), false);
  std::vector<bool> slot_taken(static_cast<size_t>(p.slots), false);
  for (int s : p.pinned) slot_taken[static_cast<size_t>(s)] = true;
  for (size_t k = 0; k < p.outs.size(); ++k) {
    const auto [s, is_i1] = p.outs[k];
    if (is_i1 || !out[k] || slot_taken[static_cast<size_t>(s)]) continue;
    const char* o = static_cast<const char*>(out[k]->raw());
    const size_t bytes = static_cast<size_t>(p.n) * sizeof(float);
    bool ok = true;
    for (size_t j = 0; j < p.last_read.size() && ok; ++j) {
      const char* i = static_cast<const char*>(args.in[j]->raw());
      const bool overlap = i < o + bytes && o < i + args.in[j]->nbytes();
      ok = !overlap || (i == o && p.last_read[j] <= p.first_write[k]);
    }
    if (ok) direct[k] = true, slot_taken[static_cast<size_t>(s)] = true;
  }
  return direct;
}

// Outputs of groups whose domain is at least this many bytes go to memory with streaming
// (non-temporal) stores from the tile slots: such a tensor does not stay in the caches until its
// reader anyway, and plain stores first read every line they write (resnet50's [16,256,56,56]
// BN+add+ReLU, bench_fusion: 15.6 -> 14.4 ms on one thread, 7.8 -> 6.8 ms on two; session 21).
constexpr int64_t kStreamBytes = int64_t{32} << 20;
// Groups over at least this many bytes prefetch their element-wise inputs two tiles ahead: the
// same BN+add+ReLU 14.4 -> 10.0 ms on one thread, 6.8 -> 4.6 ms on two; vit-cifar-tiny's step
// (2 MiB tensors) -3 %, resnet18-cifar's -3 % (back-to-back A/B, session 21).
constexpr int64_t kPrefetchBytes = int64_t{256} << 10;

// d[0, n) = s[0, n) with non-temporal stores where d is 64-byte aligned (arena and result
// buffers are, and tiles start 2 KiB apart); an _mm_sfence after a thread's last one orders them
// before the step ends.
void stream_copy(float* d, const float* s, int64_t n) {
  int64_t j = 0;
  if (reinterpret_cast<uintptr_t>(d) % 64 == 0) {
#if defined(__AVX512F__)
    for (; j + 16 <= n; j += 16) _mm512_stream_ps(d + j, _mm512_loadu_ps(s + j));
#elif defined(__AVX__)
    for (; j + 8 <= n; j += 8) _mm256_stream_ps(d + j, _mm256_loadu_ps(s + j));
#else
    for (; j + 4 <= n; j += 4) _mm_stream_ps(d + j, _mm_loadu_ps(s + j));
#endif
  }
  for (; j < n; ++j) d[j] = s[j];
}

std::vector<const float*> prefetched_inputs(const Program& p, const RunArgs& args,
                                           const std::vector<const float*>& in_f) {
  std::vector<const float*> full;
  if (p.n * static_cast<int64_t>(sizeof(float)) >= kPrefetchBytes)
    for (size_t k = 0; k < in_f.size(); ++k)
      if (in_f[k] && args.in[k]->numel() == p.n) full.push_back(in_f[k]);
  return full;
}

void run_program(const Program& p, const RunArgs& args) {
  const int64_t n_tiles = (p.n + kTile - 1) / kTile;
  const std::vector<const float*> in_f = f32_inputs(p, args);
  const bool stream = p.n * static_cast<int64_t>(sizeof(float)) >= kStreamBytes;
  const std::vector<bool> direct =
      stream ? std::vector<bool>(p.outs.size(), false) : direct_outputs(p, args, args.out);
  const std::vector<const float*> full = prefetched_inputs(p, args, in_f);
  parallel_for(n_tiles, 8, [&](int64_t tb, int64_t te) {
    std::vector<float> buf = tile_buffer(p);
    std::vector<float*> slot_ptr = slot_pointers(p, buf);
    bool pinned_done = false;
    for (int64_t t = tb; t < te; ++t) {
      const int64_t off = t * kTile, n = std::min(kTile, p.n - off);
      for (size_t k = 0; k < p.outs.size(); ++k)
        if (direct[k])
          slot_ptr[static_cast<size_t>(p.outs[k].first)] = args.out[k]->data<float>() + off;
      TilePrefetch pf;
      if (!full.empty() && t + 2 < te) pf = {&full, off + 2 * kTile, kTile};
      run_tile(p, args, in_f, slot_ptr.data(), off, n, pinned_done, pf);
      for (size_t k = 0; k < p.outs.size(); ++k) {
        if (direct[k]) continue;
        const float* s = slot_ptr[static_cast<size_t>(p.outs[k].first)];
        if (p.outs[k].second) {
          bool* o = args.out[k]->data<bool>() + off;
          for (int64_t j = 0; j < n; ++j) o[j] = s[j] != 0.f;
        } else if (stream) {
          stream_copy(args.out[k]->data<float>() + off, s, n);
        } else {
          std::memcpy(args.out[k]->data<float>() + off, s, static_cast<size_t>(n) * sizeof(float));
        }
      }
    }
    if (stream) _mm_sfence();
  });
}

}  // namespace fused

using namespace fused;

bool fused_blockable(const FusedGroup& g, int block) {
  if (block <= 0 || g.ops.empty()) return false;
  const hlo::Type& dom = g.ops.back()->result(0)->type;
  if (dom.shape().size() != 4 || dom.dim(1) % block != 0) return false;
  for (const hlo::Op* op : g.ops) {
    if (op->result(0)->type.shape() != dom.shape()) return false;
    if (op->kind != OpKind::kBroadcastInDim) continue;
    // Only scalars and per-channel vectors: [C] or [1, C, 1, 1]-like operands on dim 1.
    const Shape& in = op->operand_type(0).shape();
    hlo::I64s bd = i64s_attr(*op, "broadcast_dimensions");
    for (size_t k = 0; k < in.size(); ++k)
      if (in[k] != 1 && bd[k] != 1) return false;
  }
  return true;
}

namespace fused {

Program build_program(const FusedGroup& g, int block) {
  Program p;
  p.n = g.ops.back()->result(0)->type.numel();
  std::unordered_map<const Value*, int> in_index, slot_of;
  p.last_read.assign(g.ins.size(), -1);
  auto note_read = [&](int k) {
    p.last_read[static_cast<size_t>(k)] = static_cast<int>(p.code.size());
  };
  for (size_t k = 0; k < g.ins.size(); ++k) {
    in_index[g.ins[k]] = static_cast<int>(k);
    p.in_is_i1.push_back(g.ins[k]->type.dtype() == DType::kI1);
  }
  // Last instruction index that reads each member value; outputs live to the end.
  std::unordered_map<const Value*, size_t> last_use;
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (auto* v : g.ops[i]->operands) last_use[v] = i;
  for (const Value* v : g.outs) last_use[v] = g.ops.size();
  std::vector<int> free_slots;
  auto alloc = [&]() {
    if (!free_slots.empty()) {
      int s = free_slots.back();
      free_slots.pop_back();
      return s;
    }
    return p.slots++;
  };
  // An operand ref: a member's slot, an f32 same-shape input read in place, or an i1 input
  // loaded into a slot first.
  auto operand = [&](const Value* v) -> int {
    if (auto it = slot_of.find(v); it != slot_of.end()) return it->second;
    int k = in_index.at(v);
    if (!p.in_is_i1[static_cast<size_t>(k)]) return -(k + 1);
    Instr ld;  // kConvert of an external i1 input loads it
    ld.op = OpKind::kConvert;
    ld.dst = alloc();
    ld.a = -(k + 1);
    note_read(k);
    p.code.push_back(ld);
    slot_of[v] = ld.dst;  // loaded once, reused by later readers
    return ld.dst;
  };
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const hlo::Op& op = *g.ops[i];
    if (!fusable(op)) fail("cpu fusion", "{} cannot be fused", op.name());
    Instr in;
    in.op = op.kind;
    in.vec = vec_unary(op.kind);
    if (op.kind == OpKind::kCompare) in.dir = *fused_cmp_dir(op);
    const bool is_bcast = op.kind == OpKind::kBroadcastInDim;
    if (is_bcast) {
      auto k = in_index.find(op.operand(0));
      if (k == in_index.end()) fail("cpu fusion", "broadcast of a group member");
      in.a = -(k->second + 1);
      note_read(k->second);
      in.map = *bcast_map(op);
      if (block > 0 && in.map.size > 1) in.map.block = block;  // a channel broadcast
    } else {
      int* refs[3] = {&in.a, &in.b, &in.c};
      for (size_t j = 0; j < op.operands.size() && j < 3; ++j) *refs[j] = operand(op.operand(j));
      for (size_t j = 0; j < op.operands.size() && j < 3; ++j)
        if (*refs[j] < 0) note_read(-*refs[j] - 1);  // after operand()'s loads: this op's index
    }
    // Free operand slots whose last reader is this op (before allocating the result, so the
    // result may reuse one: every kernel reads element j before writing element j).
    bool pinned = is_bcast && in.map.size == 1;
    for (auto* v : op.operands) {
      auto it = slot_of.find(v);
      if (it == slot_of.end() || last_use[v] != i) continue;
      if (std::find(p.pinned.begin(), p.pinned.end(), it->second) != p.pinned.end()) continue;
      if (std::find(free_slots.begin(), free_slots.end(), it->second) == free_slots.end())
        free_slots.push_back(it->second);
    }
    auto is_pinned = [&](int r) {
      return r >= 0 && std::find(p.pinned.begin(), p.pinned.end(), r) != p.pinned.end();
    };
    if (op.operands.size() == 2 && !is_bcast)
      in.scalar_a = is_pinned(in.a), in.scalar_b = is_pinned(in.b);
    if (op.kind == OpKind::kClamp) in.scalar_a = is_pinned(in.a), in.scalar_c = is_pinned(in.c);
    // A group output gets a slot of its own (never a temporary's), so when it is computed in its
    // output buffer (run_program), nothing is written there before the output itself.
    const bool is_out = std::find(g.outs.begin(), g.outs.end(), op.result(0)) != g.outs.end();
    in.dst = pinned || is_out ? p.slots++ : alloc();
    if (pinned) p.pinned.push_back(in.dst);
    slot_of[op.result(0)] = in.dst;
    p.code.push_back(in);
  }
  for (const Value* v : g.outs) p.outs.push_back({slot_of.at(v), v->type.dtype() == DType::kI1});
  // Generated code keeps a chain's values in registers (fusion_jit.cpp); the interpreter's
  // passes that save tile round trips apply where it is off or has nothing to generate.
  if (!(fusion_jit_enabled() && compile_jit(p))) {
    chain_pairs(p);
    fold_broadcasts(p);
  }
  for (const auto& [slot, is_i1] : p.outs) {
    int first = static_cast<int>(p.code.size());
    for (size_t i = 0; i < p.code.size(); ++i)
      if (p.code[i].dst == slot) {
        first = static_cast<int>(i);
        break;
      }
    p.first_write.push_back(first);
  }
  // Pinned scalar broadcasts must run before anything reads them on later tiles: they are
  // skipped after the first tile of a chunk, and their slots are never reused.
  return p;
}

void broadcast_inputs_no_alias(const Program& p, Compiled& c) {
  for (const Instr& in : p.code)
    if (in.op == OpKind::kBroadcastInDim && in.map.size > 1) c.no_alias.push_back(-in.a - 1);
}

}  // namespace fused

Compiled compile_fused(const FusedGroup& g, int block) {
  const Program p = build_program(g, block);
  Compiled c;
  c.pointwise = true;
  c.chained_pairs = p.chained;
  c.folded_broadcasts = p.folded;
  c.generated_instructions = p.generated;
  broadcast_inputs_no_alias(p, c);
  c.run = [p](const RunArgs& a) { run_program(p, a); };
  return c;
}

}  // namespace netspec::exec::cpu
