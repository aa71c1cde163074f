// dot_general: operands are viewed as [B, M, K] x [B, K, N] (batch, free and contracting dims
// flattened); a view that is already contiguous (or its transpose) goes to oneDNN's matmul
// directly, one whose batch dims alone do not collapse goes with a stride per batch dim
// (StridedViews: oneDNN's brgemm matmul on AVX-512, else one product per batch in place,
// compile_per_batch_dot), anything else is first copied into that layout in scratch. The result's
// [batch, lhs free, rhs free] row-major order is exactly [B, M, N]. f32 runs on oneDNN; f64 on
// a straightforward i-k-j loop (the gradient checker needs it correct, not fast). bf16 x bf16 ->
// f32 (mixed precision) runs on oneDNN's bf16 matmul, or widened to f32 (bf16_emulated, no
// native kernel).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>

#include "core/thread_pool.h"
#include "exec/cpu/dnnl_util.h"
#include "exec/cpu/kernels.h"
#include "hlo/dims_fields.h"
#include "hlo/op_family.h"

namespace netspec::exec::cpu {

dnnl::engine& dnnl_engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}
dnnl::stream& dnnl_stream() {
  thread_local dnnl::stream s(dnnl_engine());
  return s;
}
dnnl::primitive_attr dnnl_user_scratchpad_attr() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

namespace {

using hlo::I64s;

// How one operand is presented: `perm` lists its dims in view order (groups concatenated);
// `transposed` = the last two groups are swapped in memory; `copy` = must be copied first.
struct OperandView {
  std::vector<int64_t> perm;       // view order: g0 dims, g1 dims, g2 dims
  int64_t g[3] = {1, 1, 1};        // group sizes
  bool copy = false, transposed = false;
};

// True when the operand's dims listed in `order` are row-major contiguous (size-1 dims ignored).
bool contiguous_in_order(const Shape& shape, const std::vector<int64_t>& order) {
  std::vector<int64_t> st = row_major_strides(shape);
  int64_t expect = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int64_t d = shape[static_cast<size_t>(*it)];
    if (d == 1) continue;
    if (st[static_cast<size_t>(*it)] != expect) return false;
    expect *= d;
  }
  return true;
}

OperandView analyse(const Shape& shape, const I64s& batch, const I64s& first, const I64s& second) {
  OperandView v;
  const I64s* groups[3] = {&batch, &first, &second};
  for (int i = 0; i < 3; ++i)
    for (int64_t d : *groups[i]) {
      v.perm.push_back(d);
      v.g[i] *= shape[static_cast<size_t>(d)];
    }
  if (contiguous_in_order(shape, v.perm)) return v;
  std::vector<int64_t> swapped(batch.begin(), batch.end());
  swapped.insert(swapped.end(), second.begin(), second.end());
  swapped.insert(swapped.end(), first.begin(), first.end());
  if (contiguous_in_order(shape, swapped)) {
    v.transposed = true;
    return v;
  }
  v.copy = true;
  return v;
}

// Dense [g0, g1, g2] strides, or the transposed layout [g0, g2, g1] in memory.
dnnl::memory::dims view_strides(const OperandView& v) {
  if (v.transposed && !v.copy) return {v.g[1] * v.g[2], 1, v.g[1]};
  return {v.g[1] * v.g[2], v.g[2], 1};
}

// oneDNN 2.6's AVX2 sgemm (impl "gemm:jit") runs 1.3-2x slower when an operand stored with the
// contraction dim outermost (a transposed lhs [K, M], a plain rhs [K, N]) has rows of a multiple
// of 256 floats: packing walks k across rows 1 KiB apart, which collide in the same L1 sets
// (measured on Zen 4 under the AVX2 cap: 512x128x512 TN 682 -> 413 us, 128x512x512 NN with a
// 512-wide rhs 547 -> 377 us; AVX-512's brgemm matmul shows no such effect). Such an operand is
// copied to rows padded by 16 floats when every element is reused >= 64 times, so the copy costs
// <= ~3 % of the product. Not on Zen 1 (znver1), whose 256-bit FMAs run as two 128-bit halves:
// its FMA-bound sgemm hides the conflicts, and the copies only cost (vit's weight gradients
// [2048, 256]ᵀ·[2048, 128]: 2.11 -> 1.92 ms unpadded). NETSPEC_DOT_PAD=0 turns it off, =1 on.
struct RowPad {
  int64_t rows = 0, len = 0, ld = 0;  // rows x len (all batches) -> rows x ld
  bool on() const { return ld != 0; }
  size_t bytes() const { return static_cast<size_t>(rows * ld) * 4; }
};

// Read at plan time (tests switch it).
bool dot_pad_enabled() {
  const char* e = std::getenv("NETSPEC_DOT_PAD");
  if (e && std::string_view(e) == "0") return false;
  if (e && std::string_view(e) == "1") return true;
  static const bool zen1 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_is("znver1") != 0;
  }();
  return !zen1;
}

RowPad row_pad(int64_t batch, int64_t k, int64_t len, int64_t reuse) {
  RowPad p;
  if (len % 256 != 0 || reuse < 64 || !dot_pad_enabled()) return p;
  p.rows = batch * k, p.len = len, p.ld = len + 16;
  return p;
}

void copy_padded(float* dst, const float* src, const RowPad& p) {
  parallel_for(p.rows, std::max<int64_t>(1, 16384 / p.len), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r)
      std::memcpy(dst + r * p.ld, src + r * p.len, static_cast<size_t>(p.len) * 4);
  });
}

// Operands whose dims do not collapse to [B, M, K] x [B, K, N] (a transpose folded into the dot,
// hlo/dot_fold.cpp: q as [B, T, H, D] read with batch (B, H)), or a result written in another
// layout (compile_dot_transposed_out), go to oneDNN's matmul as they lie when each of M, K and N
// still collapses to one stride: the batch dims stay apart, each with its own strides in all
// three tensors (consecutive ones merged where all three allow).
struct StridedViews {
  dnnl::memory::dims a_dims, a_st, b_dims, b_st, c_dims, c_st;
  bool swapped = false;  // a is the dot's rhs, b its lhs (the result stored transposed)
};

// (size, stride) of dims `g` (strides `st`) read in the listed order as one dim; nullopt when
// they are not consecutive in memory in that order. Size-1 dims are skipped.
std::optional<std::pair<int64_t, int64_t>> collapse(const Shape& shape,
                                                    const std::vector<int64_t>& st, const I64s& g) {
  int64_t size = 1, stride = 1, prev = -1;
  for (int64_t d : g) {
    const int64_t n = shape[static_cast<size_t>(d)], s = st[static_cast<size_t>(d)];
    if (n == 1) continue;
    if (prev >= 0 && st[static_cast<size_t>(prev)] != s * n) return std::nullopt;
    size *= n, stride = s, prev = d;
  }
  return std::make_pair(size, stride);
}

// `ost`: the stride of each result dim where the result is written (row-major: dense).
std::optional<StridedViews> strided_views(const hlo::Op& op, const std::vector<int64_t>& ost) {
  const auto& d = op.attrs.get<hlo::DotDims>("dot_dimension_numbers");
  const Shape& ls = op.operand_type(0).shape();
  const Shape& rs = op.operand_type(1).shape();
  const Shape& os = op.result(0)->type.shape();
  const I64s lf = hlo::free_dims(static_cast<int64_t>(ls.size()), d.lhs_batching,
                                 d.lhs_contracting);
  const I64s rf = hlo::free_dims(static_cast<int64_t>(rs.size()), d.rhs_batching,
                                 d.rhs_contracting);
  const std::vector<int64_t> lst = row_major_strides(ls), rst = row_major_strides(rs);
  const int64_t nb = static_cast<int64_t>(d.lhs_batching.size());
  I64s om(lf.size()), on(rf.size());  // the result's M and N dims
  std::iota(om.begin(), om.end(), nb);
  std::iota(on.begin(), on.end(), nb + static_cast<int64_t>(lf.size()));
  auto m = collapse(ls, lst, lf), kl = collapse(ls, lst, d.lhs_contracting);
  auto kr = collapse(rs, rst, d.rhs_contracting), n = collapse(rs, rst, rf);
  auto cm = collapse(os, ost, om), cn = collapse(os, ost, on);
  if (!m || !kl || !kr || !n || !cm || !cn || kl->first != kr->first || kl->first == 0)
    return std::nullopt;  // (an empty contraction: the plain path writes its zeros)
  StridedViews v;
  for (size_t j = 0; j < d.lhs_batching.size(); ++j) {
    const auto li = static_cast<size_t>(d.lhs_batching[j]);
    const auto ri = static_cast<size_t>(d.rhs_batching[j]);
    const int64_t size = ls[li];
    if (size == 1) continue;
    if (!v.a_dims.empty() && v.a_st.back() == lst[li] * size && v.b_st.back() == rst[ri] * size &&
        v.c_st.back() == ost[j] * size) {
      v.a_dims.back() *= size, v.b_dims.back() *= size, v.c_dims.back() *= size;
      v.a_st.back() = lst[li], v.b_st.back() = rst[ri], v.c_st.back() = ost[j];
      continue;
    }
    v.a_dims.push_back(size), v.b_dims.push_back(size), v.c_dims.push_back(size);
    v.a_st.push_back(lst[li]), v.b_st.push_back(rst[ri]), v.c_st.push_back(ost[j]);
  }
  if (v.a_dims.size() > 8) return std::nullopt;  // oneDNN: at most 12 dims
  v.a_dims.insert(v.a_dims.end(), {m->first, kl->first});
  v.a_st.insert(v.a_st.end(), {m->second, kl->second});
  v.b_dims.insert(v.b_dims.end(), {kr->first, n->first});
  v.b_st.insert(v.b_st.end(), {kr->second, n->second});
  v.c_dims.insert(v.c_dims.end(), {cm->first, cn->first});
  v.c_st.insert(v.c_st.end(), {cm->second, cn->second});
  // A size-1 dim's stride is arbitrary: give it the dense one (oneDNN checks them anyway).
  for (auto* t : {&v.a_dims, &v.b_dims, &v.c_dims}) {
    dnnl::memory::dims& st = t == &v.a_dims ? v.a_st : t == &v.b_dims ? v.b_st : v.c_st;
    for (size_t i = t->size(); i-- > 0;)
      if ((*t)[i] == 1) st[i] = i + 1 < t->size() ? st[i + 1] * (*t)[i + 1] : 1;
  }
  const size_t r = v.c_dims.size();
  if (v.c_st[r - 1] != 1 && v.c_st[r - 2] == 1) {  // a column-major result: C^T = B^T A^T
    std::swap(v.a_dims, v.b_dims), std::swap(v.a_st, v.b_st);
    std::swap(v.a_dims[r - 1], v.a_dims[r - 2]), std::swap(v.a_st[r - 1], v.a_st[r - 2]);
    std::swap(v.b_dims[r - 1], v.b_dims[r - 2]), std::swap(v.b_st[r - 1], v.b_st[r - 2]);
    std::swap(v.c_dims[r - 1], v.c_dims[r - 2]), std::swap(v.c_st[r - 1], v.c_st[r - 2]);
    v.swapped = true;
  }
  return v;
}

bool per_batch_dot_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("NETSPEC_DOT_PER_BATCH");
    return !(e && std::string_view(e) == "0");
  }();
  return on;
}

// The strided views as one product per batch, read in place: small ones (<= 128³ multiply-adds,
// 256³ on AVX-512 tiles) on small_gemm.cpp's kernel, larger ones on oneDNN's dnnl_sgemm where
// each operand has a unit-stride dim. Without AVX-512 oneDNN 2.6 has no matmul on such strides, and copying both
// operands of attention's many small products (q·kᵀ, p·v per batch and head: 64x64 by 32) first
// ran them at 30-50 GFLOP/s of the AVX2 EPYC's 78. Batches run in parallel where there are at
// least two per thread, else one after another (each sgemm threaded). The result's rows must be
// dense. NETSPEC_DOT_PER_BATCH=0: the copies.
std::optional<Compiled> compile_per_batch_dot(const StridedViews& v, bool small_only = false) {
  if (!per_batch_dot_enabled()) return std::nullopt;
  const size_t r = v.c_dims.size();
  const int64_t M = v.a_dims[r - 2], K = v.a_dims[r - 1], N = v.b_dims[r - 1];
  const int64_t am = v.a_st[r - 2], ak = v.a_st[r - 1], bk = v.b_st[r - 2], bn = v.b_st[r - 1];
  const int64_t ldc = v.c_st[r - 2];
  if (v.c_st[r - 1] != 1 || (M > 1 && ldc < N)) return std::nullopt;
  const int64_t nbd = static_cast<int64_t>(r) - 2;
  int64_t nb = 1;
  for (int64_t i = 0; i < nbd; ++i) nb *= v.a_dims[static_cast<size_t>(i)];
  const bool parallel = nb >= 2 * ThreadPool::global().num_threads();
  // AVX-512 tiles up to 2^23 multiply-adds: vit-tiny's 197x197 by 64 (2.5M) ran ~10 % faster
  // on them than on oneDNN's brgemm (its eval step at b64 -2 %, Zen 5).
  const int64_t small_max = int64_t{1} << (small_gemm_avx512_runs() ? 23 : 21);
  const bool small = parallel && M * N * K <= small_max;
  if (small_only && !small) return std::nullopt;
  // dnnl_sgemm's form of a rows x cols matrix with strides (rs, cs): ('N' | 'T', leading dim).
  auto form = [](int64_t rows, int64_t cols, int64_t rs, int64_t cs)
      -> std::optional<std::pair<char, int64_t>> {
    if (cs == 1 && (rows == 1 || rs >= cols)) return std::make_pair('N', rows == 1 ? cols : rs);
    if (rs == 1 && (cols == 1 || cs >= rows)) return std::make_pair('T', cols == 1 ? rows : cs);
    return std::nullopt;
  };
  auto fa = form(M, K, am, ak), fb = form(K, N, bk, bn);
  if (!small && (!fa || !fb)) return std::nullopt;
  const std::vector<int64_t> dims(v.c_dims.begin(), v.c_dims.begin() + nbd);
  const std::vector<int64_t> ast(v.a_st.begin(), v.a_st.begin() + nbd),
      bst(v.b_st.begin(), v.b_st.begin() + nbd), cst(v.c_st.begin(), v.c_st.begin() + nbd);
  const size_t src = v.swapped ? 1 : 0;
  const char ta = fa ? fa->first : 'N', tb = fb ? fb->first : 'N';
  const int64_t lda = fa ? fa->second : 0, ldb = fb ? fb->second : 0;
  Compiled c;
  c.run = [=](const RunArgs& a) {
    const float* A = a.in[src]->data<float>();
    const float* B = a.in[1 - src]->data<float>();
    float* C = a.out[0]->data<float>();
    auto run = [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        int64_t oa = 0, ob = 0, oc = 0;
        for (int64_t d = nbd - 1, rest = i; d >= 0; --d) {
          const auto du = static_cast<size_t>(d);
          const int64_t idx = rest % dims[du];
          rest /= dims[du];
          oa += idx * ast[du], ob += idx * bst[du], oc += idx * cst[du];
        }
        if (small)
          small_gemm(M, N, K, A + oa, am, ak, B + ob, bk, bn, C + oc, ldc);
        else
          dnnl_sgemm(ta, tb, M, N, K, 1.f, A + oa, lda, B + ob, ldb, 0.f, C + oc, ldc);
      }
    };
    if (parallel)
      parallel_for(nb, 1, run);
    else
      run(0, nb);
  };
  return c;
}

bool dot_split_enabled() {
  static const bool on = [] {
    const char* e = std::getenv("NETSPEC_DOT_SPLIT");
    return !(e && std::string_view(e) == "0");
  }();
  return on;
}

// How a large 2-D product on oneDNN's AVX2 sgemm (impl "gemm:jit") is shared between threads.
// Warm and alone, oneDNN 2.6's own split reaches the same ~73 GFLOP/s on the Zen 1 as the two
// below; inside a train step (operands fresh from other ops) it did not: vit-cifar-tiny's step
// ran 2-3 % faster split here (weight gradients [128, 2048] x [2048, 128]: 41-62 GFLOP/s before).
// kRows: each thread one block of rows of A and C (thread t the same rows as the pool's chunk t
// of the ops around it); kDepth (small M x N, long K): each thread a block of K into its own
// partial C, summed after.
enum class DotSplit { kNone, kRows, kDepth };

DotSplit dot_split(int64_t B, int64_t M, int64_t K, int64_t N, int threads) {
  if (!dot_split_enabled() || B != 1 || threads < 2 || M * N * K < (int64_t{1} << 22))
    return DotSplit::kNone;
  if (M >= 64 * threads) return DotSplit::kRows;
  if (K >= 256 * threads && M * N <= (int64_t{1} << 18)) return DotSplit::kDepth;
  return DotSplit::kNone;
}

// C [M, N] = A·B by `split` over `threads` single-threaded dnnl_sgemm calls (each inside the
// pool's OpenMP region, where oneDNN runs on the calling thread). A and B as dnnl_sgemm takes
// them (ta / tb, lda / ldb); partial: (threads - 1) x M x N floats of scratch for kDepth.
void run_split_dot(DotSplit split, int threads, char ta, char tb, int64_t M, int64_t N, int64_t K,
                   const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                   float* partial) {
  auto block = [&](int64_t len) { return ((len + threads - 1) / threads + 7) / 8 * 8; };
  if (split == DotSplit::kRows) {
    const int64_t rows = block(M);
    parallel_for(threads, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t m0 = t * rows, m1 = std::min(M, m0 + rows);
        if (m0 >= m1) continue;
        const float* a = ta == 'T' ? A + m0 : A + m0 * lda;
        dnnl_sgemm(ta, tb, m1 - m0, N, K, 1.f, a, lda, B, ldb, 0.f, C + m0 * N, N);
      }
    });
    return;
  }
  const int64_t depth = block(K);
  parallel_for(threads, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t k0 = std::min(K, t * depth), k1 = std::min(K, k0 + depth);
      float* c = t == 0 ? C : partial + (t - 1) * M * N;
      if (k0 >= k1) {
        std::fill(c, c + M * N, 0.f);
        continue;
      }
      const float* a = ta == 'T' ? A + k0 * lda : A + k0;
      const float* b = tb == 'T' ? B + k0 : B + k0 * ldb;
      dnnl_sgemm(ta, tb, M, N, k1 - k0, 1.f, a, lda, b, ldb, 0.f, c, N);
    }
  });
  parallel_for(M * N, 4096, [&](int64_t lo, int64_t hi) {
    for (int64_t t = 1; t < threads; ++t) {
      const float* p = partial + (t - 1) * M * N;
#pragma GCC ivdep
      for (int64_t i = lo; i < hi; ++i) C[i] += p[i];
    }
  });
}

// f32 matmul on the strided views; nullopt where oneDNN has no brgemm kernel for them.
std::optional<Compiled> compile_strided_dot(const StridedViews& v) {
  // Small products per batch on small_gemm's AVX-512 tiles before oneDNN's brgemm matmul:
  // attention's [32, 4] products of 64x64 by 32 ran at ~200 GFLOP/s there on the Zen 5.
  if (small_gemm_avx512_runs())
    if (auto c = compile_per_batch_dot(v, /*small_only=*/true)) return c;
  using dt = dnnl::memory::data_type;
  dnnl::matmul::primitive_desc pd;
  try {
    dnnl::memory::desc a_md(v.a_dims, dt::f32, v.a_st), b_md(v.b_dims, dt::f32, v.b_st),
        c_md(v.c_dims, dt::f32, v.c_st);
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md),
                                      dnnl_user_scratchpad_attr(), dnnl_engine());
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  // Only the brgemm kernels (AVX-512) are taken on strides: oneDNN 2.6's gemm-based matmul
  // accepted some of these descriptors and then failed to execute them (a [1024, 1, 32] result
  // stored with its size-1 dim innermost). Elsewhere: one product per batch (compile_per_batch_dot).
  if (std::string(pd.impl_info_str()).rfind("brg", 0) != 0) return compile_per_batch_dot(v);
  auto prim = std::make_shared<dnnl::matmul>(pd);
  Compiled c;
  const size_t pad_bytes = pd.scratchpad_desc().get_size();
  c.scratch_bytes = pad_bytes;
  auto a_md = pd.src_desc(), b_md = pd.weights_desc(), c_md = pd.dst_desc();
  const size_t src = v.swapped ? 1 : 0;
  c.run = [=](const RunArgs& a) {
    auto& eng = dnnl_engine();
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, dnnl::memory(a_md, eng, const_cast<void*>(a.in[src]->raw()))},
        {DNNL_ARG_WEIGHTS, dnnl::memory(b_md, eng, const_cast<void*>(a.in[1 - src]->raw()))},
        {DNNL_ARG_DST, dnnl::memory(c_md, eng, a.out[0]->raw())}};
    if (pad_bytes)
      args.insert({DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), eng, a.scratch)});
    prim->execute(dnnl_stream(), args);
    dnnl_stream().wait();
  };
  return c;
}

template <typename T>
void gemm_loop(const T* a, const T* b, T* c, int64_t B, int64_t M, int64_t K, int64_t N) {
  // c[b, i, :] = sum_k a[b, i, k] * b[b, k, :]
  parallel_for(B * M, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(K * N, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      int64_t bi = r / M;
      const T* ar = a + r * K;
      const T* bb = b + bi * K * N;
      T* cr = c + r * N;
      std::fill(cr, cr + N, T(0));
      for (int64_t k = 0; k < K; ++k) {
        const T av = ar[k];
        const T* br = bb + k * N;
        for (int64_t j = 0; j < N; ++j) cr[j] += av * br[j];
      }
    }
  });
}

std::optional<Compiled> compile_dot(const hlo::Op& op) {
  auto* dims = op.attrs.get_if<hlo::DotDims>("dot_dimension_numbers");
  if (!dims || op.operands.size() != 2) return std::nullopt;
  DType t = op.operand_type(0).dtype();
  const DType rt = op.result(0)->type.dtype();
  // bf16 operands with an f32 result (mixed precision): oneDNN's bf16 matmul where the CPU has
  // one (AVX-512 BF16 / AMX), else the operands widened to f32 in scratch (exact) on the f32 one.
  const bool bf16 = t == DType::kBF16 && rt == DType::kF32;
  if (op.operand_type(1).dtype() != t || (rt != t && !bf16)) return std::nullopt;
  if (t != DType::kF32 && t != DType::kF64 && !bf16) return std::nullopt;
  const Shape& ls = op.operand_type(0).shape();
  const Shape& rs = op.operand_type(1).shape();
  if (op.result(0)->type.numel() == 0) return std::nullopt;
  I64s lf =
      hlo::free_dims(static_cast<int64_t>(ls.size()), dims->lhs_batching, dims->lhs_contracting);
  I64s rf =
      hlo::free_dims(static_cast<int64_t>(rs.size()), dims->rhs_batching, dims->rhs_contracting);
  OperandView lv = analyse(ls, dims->lhs_batching, lf, dims->lhs_contracting);     // [B, M, K]
  OperandView rv = analyse(rs, dims->rhs_batching, dims->rhs_contracting, rf);     // [B, K, N]
  const int64_t B = lv.g[0], M = lv.g[1], K = lv.g[2], N = rv.g[2];
  if (rv.g[0] != B || rv.g[1] != K) return std::nullopt;
  // One free side of size 1 (matvec.cpp): lhs [B, M, K] with N = 1, or rhs [B, K, N] with M = 1,
  // is the matrix; stored with k innermost it runs as rows, else as columns.
  if (t == DType::kF32 && rt == DType::kF32 && !lv.copy && !rv.copy && (N == 1 || M == 1) &&
      matvec_enabled()) {
    const bool lhs_matrix = N == 1;
    const bool rows = lhs_matrix ? !lv.transposed : rv.transposed;
    const int64_t L = lhs_matrix ? M : N;
    const int mi = lhs_matrix ? 0 : 1;
    Compiled c;
    c.run = [=](const RunArgs& a) {
      const float* A = a.in[mi]->data<float>();
      const float* x = a.in[1 - mi]->data<float>();
      float* y = a.out[0]->data<float>();
      if (rows)
        matvec_rows(A, x, y, B, L, K);
      else
        matvec_columns(A, x, y, B, L, K);
    };
    return c;
  }
  if (t == DType::kF32 && rt == DType::kF32 && (lv.copy || rv.copy))
    if (auto v = strided_views(op, row_major_strides(op.result(0)->type.shape())))
      if (auto c = compile_strided_dot(*v)) return c;
  if (t == DType::kF64) lv.copy = lv.copy || lv.transposed, rv.copy = rv.copy || rv.transposed;
  if (lv.copy) lv.transposed = false;
  if (rv.copy) rv.transposed = false;
  using dt = dnnl::memory::data_type;
  // a_st / b_st: the operands' strides when not their views' (padded rows, RowPad).
  auto matmul_pd = [&](dt in, dnnl::memory::dims a_st = {}, dnnl::memory::dims b_st = {}) {
    if (a_st.empty()) a_st = view_strides(lv);
    if (b_st.empty()) b_st = view_strides(rv);
    dnnl::memory::desc a_md({B, M, K}, in, a_st), b_md({B, K, N}, in, b_st);
    dnnl::memory::desc c_md({B, M, N}, dt::f32, dnnl::memory::dims{M * N, N, 1});
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, c_md),
                                        dnnl_user_scratchpad_attr(), dnnl_engine());
  };
  dnnl::matmul::primitive_desc pd;
  bool widen = false;  // bf16 on the f32 primitive
  if (bf16) {
    widen = bf16_emulated();
    if (!widen) try {
        pd = matmul_pd(dt::bf16);
        widen = std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
      } catch (const dnnl::error&) {
        widen = true;
      }
    if (!widen) t = DType::kF32;  // only the result type matters below; es stays 2
  }
  const size_t es = bf16 && !widen ? 2 : dtype_size(widen ? DType::kF32 : t);
  // Scratch: [lhs f32][rhs f32] (widened bf16), [lhs copy][rhs copy][oneDNN scratchpad], each
  // 64-byte aligned.
  auto al = [](size_t n) { return (n + 63) / 64 * 64; };
  const size_t wl_bytes = widen ? al(static_cast<size_t>(B * M * K) * 4) : 0;
  const size_t wr_bytes = widen ? al(static_cast<size_t>(B * K * N) * 4) : 0;
  const size_t w_bytes = wl_bytes + wr_bytes;
  size_t l_bytes = lv.copy ? al(static_cast<size_t>(B * M * K) * es) : 0;
  size_t r_bytes = rv.copy ? al(static_cast<size_t>(B * K * N) * es) : 0;
  std::vector<int64_t> l_st = permuted_strides(ls, lv.perm), r_st = permuted_strides(rs, rv.perm);
  std::vector<int64_t> l_dims, r_dims;
  for (int64_t d : lv.perm) l_dims.push_back(ls[static_cast<size_t>(d)]);
  for (int64_t d : rv.perm) r_dims.push_back(rs[static_cast<size_t>(d)]);
  Compiled c;
  auto prepare = [=](const RunArgs& a, const void*& lp, const void*& rp) {
    lp = a.in[0]->raw();
    rp = a.in[1]->raw();
    if (widen) {
      widen_bf16(a.in[0]->data<uint16_t>(), reinterpret_cast<float*>(a.scratch), B * M * K);
      widen_bf16(a.in[1]->data<uint16_t>(), reinterpret_cast<float*>(a.scratch + wl_bytes),
                 B * K * N);
      lp = a.scratch;
      rp = a.scratch + wl_bytes;
    }
    if (lv.copy) {
      strided_copy(a.scratch + w_bytes, lp, l_dims, l_st, es);
      lp = a.scratch + w_bytes;
    }
    if (rv.copy) {
      strided_copy(a.scratch + w_bytes + l_bytes, rp, r_dims, r_st, es);
      rp = a.scratch + w_bytes + l_bytes;
    }
  };
  if (t == DType::kF64) {
    c.scratch_bytes = l_bytes + r_bytes;
    c.run = [=](const RunArgs& a) {
      const void *lp, *rp;
      prepare(a, lp, rp);
      gemm_loop(static_cast<const double*>(lp), static_cast<const double*>(rp), a.out[0]->data<double>(), B, M, K, N);
    };
    return c;
  }
  if (!bf16 || widen) try {
      pd = matmul_pd(dt::f32);
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
  // Operands to copy to padded rows (RowPad): only on the f32 gemm:jit kernels.
  RowPad lpad, rpad;
  if ((!bf16 || widen) && std::string(pd.impl_info_str()) == "gemm:jit") {
    if (lv.transposed) lpad = row_pad(B, K, M, N);   // stored [B, K, M]
    if (!rv.transposed) rpad = row_pad(B, K, N, M);  // stored [B, K, N]
    if (lpad.on() || rpad.on()) try {
        pd = matmul_pd(
            dt::f32, lpad.on() ? dnnl::memory::dims{K * lpad.ld, 1, lpad.ld} : dnnl::memory::dims{},
            rpad.on() ? dnnl::memory::dims{K * rpad.ld, rpad.ld, 1} : dnnl::memory::dims{});
        if (std::string(pd.impl_info_str()) != "gemm:jit")
          throw dnnl::error(dnnl_unimplemented, "");
      } catch (const dnnl::error&) {  // padded strides not on gemm:jit: the plain operands
        lpad = rpad = RowPad{};
        pd = matmul_pd(dt::f32);
      }
  }
  auto prim = std::make_shared<dnnl::matmul>(pd);
  size_t pad_bytes = pd.scratchpad_desc().get_size();
  const size_t lpad_off = w_bytes + l_bytes + r_bytes, rpad_off = lpad_off + al(lpad.bytes());
  const size_t pad_off = rpad_off + al(rpad.bytes());
  const int threads = ThreadPool::global().num_threads();
  const DotSplit split = !bf16 && !lv.copy && !rv.copy && pd.impl_info_str() == std::string("gemm:jit")
                             ? dot_split(B, M, K, N, threads)
                             : DotSplit::kNone;
  const size_t part_off = pad_off + al(pad_bytes);
  c.scratch_bytes = split == DotSplit::kDepth
                        ? part_off + static_cast<size_t>((threads - 1) * M * N) * 4
                        : pad_off + pad_bytes;
  c.padded_dot = lpad.on() || rpad.on();
  c.split_dot = split != DotSplit::kNone;
  auto a_md = pd.src_desc(), b_md = pd.weights_desc(), c_md = pd.dst_desc();
  // dnnl_sgemm's form of the operands (after any row padding) for the split.
  const char ta = lv.transposed ? 'T' : 'N', tb = rv.transposed ? 'T' : 'N';
  const int64_t lda = lpad.on() ? lpad.ld : (lv.transposed ? M : K);
  const int64_t ldb = rpad.on() ? rpad.ld : (rv.transposed ? K : N);
  c.run = [=](const RunArgs& a) {
    const void *lp, *rp;
    prepare(a, lp, rp);
    if (lpad.on()) {
      copy_padded(reinterpret_cast<float*>(a.scratch + lpad_off), static_cast<const float*>(lp),
                  lpad);
      lp = a.scratch + lpad_off;
    }
    if (rpad.on()) {
      copy_padded(reinterpret_cast<float*>(a.scratch + rpad_off), static_cast<const float*>(rp),
                  rpad);
      rp = a.scratch + rpad_off;
    }
    if (split != DotSplit::kNone) {
      run_split_dot(split, threads, ta, tb, M, N, K, static_cast<const float*>(lp), lda,
                    static_cast<const float*>(rp), ldb, a.out[0]->data<float>(),
                    reinterpret_cast<float*>(a.scratch + part_off));
      return;
    }
    auto& eng = dnnl_engine();
    dnnl::memory am(a_md, eng, const_cast<void*>(lp)), bm(b_md, eng, const_cast<void*>(rp)),
        cm(c_md, eng, a.out[0]->raw());
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
    if (pad_bytes)
      args.insert(
          {DNNL_ARG_SCRATCHPAD, dnnl::memory(pd.scratchpad_desc(), eng, a.scratch + pad_off)});
    prim->execute(dnnl_stream(), args);
    dnnl_stream().wait();
  };
  return c;
}

}  // namespace

std::optional<Compiled> compile_dot_transposed_out(const hlo::Op& op, const hlo::I64s& perm) {
  if (op.operands.size() != 2 || !all_tensors(op) ||
      !op.attrs.get_if<hlo::DotDims>("dot_dimension_numbers"))
    return std::nullopt;
  for (size_t i = 0; i < 2; ++i)
    if (op.operand_type(i).dtype() != DType::kF32) return std::nullopt;
  const hlo::Type& rt = op.result(0)->type;
  if (rt.dtype() != DType::kF32 || rt.numel() == 0 || perm.size() != rt.shape().size())
    return std::nullopt;
  // transpose(r, perm)[i] is dim perm[i] of r: r's dim perm[i] steps by the transpose's stride i.
  Shape ts(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) ts[i] = rt.shape()[static_cast<size_t>(perm[i])];
  const std::vector<int64_t> tst = row_major_strides(ts);
  std::vector<int64_t> ost(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) ost[static_cast<size_t>(perm[i])] = tst[i];
  auto v = strided_views(op, ost);
  return v ? compile_strided_dot(*v) : std::nullopt;
}

void register_dot(Compiler* t) {
  hlo::FamilyTable<Compiler> ft(t, "dot.cpp", {"dot"});
  ft.set(hlo::OpKind::kDotGeneral, compile_dot);
}

}  // namespace netspec::exec::cpu
