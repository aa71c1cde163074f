// cpu fast kernels against the ref kernels on random data: convolution layouts (NHWC/HWIO
// dimension numbers, asymmetric padding, groups/depthwise, rhs dilation, strides, lhs_dilation
// i.e. transposed convolution), dot_general layouts (transposed operands, batch dims in the
// middle, f64), reductions and pooling windows. Each case also checks that the planner took the
// fast path (no ref fallback), so the comparison really tests the cpu kernel.
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>

#include "core/thread_pool.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/dnnl_util.h"
#include "exec/cpu/kernels.h"
#include "exec/cpu/kernels/vmath.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::ConvDims;
using hlo::ConvOptions;
using hlo::DotDims;
using hlo::OpKind;

Tensor random(DType dt, Shape s, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(num_elements(s)));
  for (auto& x : v) x = u(gen);
  return make(dt, std::move(s), v);
}

// Runs body on both backends; results agree within tol; the cpu plan has no ref step.
void check_against_ref(const std::vector<Tensor>& in, const BodyFn& body, double tol,
                       const std::string& what, bool expect_fast = true) {
  std::vector<Type> ts;
  for (auto& t : in) ts.push_back(type_of(t));
  auto st = exec::cpu::plan_stats(*make_module(ts, body)->funcs[0]);
  if (expect_fast) {
    EXPECT_EQ(st.ref_steps, 0) << what << ": fell back to ref for " << st.fallback_ops;
  }
  auto want = run_fn("ref", in, body);
  auto got = run_fn("cpu", in, body);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) expect_near(got[i], want[i], tol, tol, what);
}

ConvDims nhwc() {  // [b, 0, 1, f] x [0, 1, i, o] -> [b, 0, 1, f]
  ConvDims d;
  d.input_batch = 0, d.input_feature = 3, d.input_spatial = {1, 2};
  d.kernel_input_feature = 2, d.kernel_output_feature = 3, d.kernel_spatial = {0, 1};
  d.output_batch = 0, d.output_feature = 3, d.output_spatial = {1, 2};
  return d;
}

void check_conv(const Shape& xs, const Shape& ws, const ConvOptions& o, const std::string& what,
                uint32_t seed) {
  Tensor x = random(DType::kF32, xs, seed), w = random(DType::kF32, ws, seed + 1);
  check_against_ref(
      {x, w}, [&](Builder& b, const Values& a) { return Values{b.convolution(a[0], a[1], o)}; },
      1e-4, what);
}

TEST(CpuConv, NchwStridedAsymmetricPadding) {
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.window_strides = {2, 1};
  o.padding = {{1, 2}, {0, 1}};
  check_conv({2, 3, 9, 7}, {4, 3, 3, 2}, o, "nchw strided asym", 1);
}

TEST(CpuConv, NhwcHwioWithDilation) {
  ConvOptions o;
  o.dims = nhwc();
  o.rhs_dilation = {2, 1};
  o.padding = {{2, 2}, {1, 0}};
  check_conv({2, 8, 6, 3}, {3, 2, 3, 5}, o, "nhwc hwio dilated", 3);
}

TEST(CpuConv, GroupedAndDepthwise) {
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.feature_group_count = 2;
  o.padding = {{1, 1}, {1, 1}};
  check_conv({1, 4, 5, 5}, {6, 2, 3, 3}, o, "groups=2", 5);
  ConvOptions d = o;
  d.dims = nhwc();
  d.feature_group_count = 4;  // depthwise, channel multiplier 2
  check_conv({2, 6, 6, 4}, {3, 3, 1, 8}, d, "depthwise nhwc", 7);
}

TEST(CpuConv, OneAndThreeSpatialDims) {
  ConvOptions o;
  o.dims = ConvOptions::nchw(1);
  o.window_strides = {3};
  o.padding = {{0, 2}};
  check_conv({2, 3, 11}, {2, 3, 4}, o, "1d", 9);
  ConvOptions t;
  t.dims = ConvOptions::nchw(3);
  t.padding = {{1, 0}, {0, 1}, {1, 1}};
  check_conv({1, 2, 4, 5, 3}, {3, 2, 2, 2, 3}, t, "3d", 11);
}

TEST(CpuConv, TransposedViaLhsDilation) {
  // The input-gradient form of a stride-2, pad-1, 3x3 conv on 8x8: dilate dy by 2.
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.lhs_dilation = {2, 2};
  o.padding = {{1, 2}, {1, 2}};
  check_conv({2, 4, 4, 4}, {3, 4, 3, 3}, o, "transposed", 13);
  ConvOptions g = o;  // grouped, dilated kernel, NHWC, uneven
  g.dims = nhwc();
  g.feature_group_count = 2;
  g.rhs_dilation = {1, 2};
  g.lhs_dilation = {3, 2};
  g.padding = {{1, 1}, {3, 4}};
  check_conv({1, 3, 4, 4}, {2, 3, 2, 6}, g, "transposed grouped nhwc", 15);
}

TEST(CpuConv, UnsupportedFormsStillAgreeViaRef) {
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.batch_group_count = 2;
  Tensor x = random(DType::kF32, {4, 3, 5, 5}, 17), w = random(DType::kF32, {4, 3, 2, 2}, 18);
  check_against_ref(
      {x, w}, [&](Builder& b, const Values& a) { return Values{b.convolution(a[0], a[1], o)}; },
      1e-4, "batch groups", /*expect_fast=*/false);
  ConvOptions t;  // transposed with pad_lo > (K-1)*r: outside what backward-data expresses
  t.dims = ConvOptions::nchw(2);
  t.lhs_dilation = {2, 2};
  t.padding = {{3, 0}, {-1, 2}};
  Tensor y = random(DType::kF32, {1, 2, 4, 4}, 19), k = random(DType::kF32, {3, 2, 3, 3}, 20);
  check_against_ref(
      {y, k}, [&](Builder& b, const Values& a) { return Values{b.convolution(a[0], a[1], t)}; },
      1e-4, "transposed, large pad", /*expect_fast=*/false);
}

void check_dot(const Shape& ls, const Shape& rs, const DotDims& d, DType dt,
               const std::string& what) {
  Tensor x = random(dt, ls, 21), y = random(dt, rs, 22);
  check_against_ref(
      {x, y}, [&](Builder& b, const Values& a) { return Values{b.dot_general(a[0], a[1], d)}; },
      dt == DType::kF64 ? 1e-12 : 1e-4, what);
}

TEST(CpuDot, Layouts) {
  DotDims mm;
  mm.lhs_contracting = {1}, mm.rhs_contracting = {0};
  check_dot({33, 17}, {17, 20}, mm, DType::kF32, "matmul");
  check_dot({33, 17}, {17, 20}, mm, DType::kF64, "matmul f64");
  DotDims tt;  // x^T y^T
  tt.lhs_contracting = {0}, tt.rhs_contracting = {1};
  check_dot({17, 33}, {20, 17}, tt, DType::kF32, "both transposed");
  check_dot({17, 33}, {20, 17}, tt, DType::kF64, "both transposed f64");
  DotDims mid;  // batch dim in the middle of lhs, contracting first in rhs: needs copies
  mid.lhs_batching = {1}, mid.rhs_batching = {2};
  mid.lhs_contracting = {0}, mid.rhs_contracting = {0};
  check_dot({5, 3, 4, 6}, {5, 7, 3}, mid, DType::kF32, "batch in the middle");
  DotDims multi;  // two contracting dims, two free dims on the lhs
  multi.lhs_contracting = {1, 3}, multi.rhs_contracting = {0, 1};
  check_dot({2, 3, 4, 5}, {3, 5, 6}, multi, DType::kF32, "multi contract");
}

// One free side of size 1 runs on matvec.cpp's loops: the matrix stored k-innermost ("rows") or
// free-innermost ("columns"), as lhs (N = 1) or rhs (M = 1), with k tails (not a multiple of 16),
// the AVX2 groups of 8 rows / 8 columns, and more than one 512-column block.
TEST(CpuDot, MatVecForms) {
  DotDims scan_y;  // mamba's y_t = h_t · C_t: [1, 32, 256, 16] x [1, 32, 16] -> [1, 32, 256]
  scan_y.lhs_batching = {0, 1}, scan_y.rhs_batching = {0, 1};
  scan_y.lhs_contracting = {3}, scan_y.rhs_contracting = {2};
  check_dot({1, 32, 256, 16}, {1, 32, 16}, scan_y, DType::kF32, "rows, lhs matrix");
  DotDims scan_c;  // its VJP for C: [1, 32, 256, 16] x [1, 32, 256] -> [1, 32, 16]
  scan_c.lhs_batching = {0, 1}, scan_c.rhs_batching = {0, 1};
  scan_c.lhs_contracting = {2}, scan_c.rhs_contracting = {2};
  check_dot({1, 32, 256, 16}, {1, 32, 256}, scan_c, DType::kF32, "columns, lhs matrix");
  // Without AVX-512 (and in exec_capped_avx2): rows in groups of 8 (K % 8 == 0, K % 16 != 0
  // here), columns in groups of 8 (L = 24, a k tail of 37 % 4).
  DotDims rows8 = scan_y;
  check_dot({1, 3, 24, 40}, {1, 3, 40}, rows8, DType::kF32, "rows, 8-row groups, k = 40");
  DotDims cols8 = scan_c;
  check_dot({1, 3, 37, 24}, {1, 3, 37}, cols8, DType::kF32, "columns, 8-column groups, k = 37");
  DotDims vm;  // [4, 37] x [4, 37, 600] -> [4, 600]
  vm.lhs_batching = {0}, vm.rhs_batching = {0};
  vm.lhs_contracting = {1}, vm.rhs_contracting = {1};
  check_dot({4, 37}, {4, 37, 600}, vm, DType::kF32, "columns, rhs matrix, 2 blocks");
  DotDims vmt = vm;  // [4, 37] x [4, 600, 37] -> [4, 600]
  vmt.rhs_contracting = {2};
  check_dot({4, 37}, {4, 600, 37}, vmt, DType::kF32, "rows, rhs matrix, k tail");
  DotDims mv;  // [300, 45] x [45] -> [300]
  mv.lhs_contracting = {1}, mv.rhs_contracting = {0};
  check_dot({300, 45}, {45}, mv, DType::kF32, "plain matvec");
  check_dot({300, 45}, {45}, mv, DType::kF64, "plain matvec f64");
}

// The rows form on AVX-512 reduces 16 rows at once (matvec.cpp rows16): each output must be
// the sum row_dot forms for one row, bit for bit: 16 lane sums (an FMA chain over k), then the
// halving tree j + 8, j + 4, j + 2, j + 1. Elsewhere (AVX2 groups of 8) within f32 rounding.
TEST(CpuDot, MatVecRowsOfSixteenEqualOneRowAtATime) {
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> u(-2, 2);
  const bool avx512 = std::string_view(exec::cpu::vec_math_isa()) == "avx512";
  for (int64_t K : {16, 48}) {
    const int64_t B = 3, L = 32;
    std::vector<float> a(static_cast<size_t>(B * L * K)), x(static_cast<size_t>(B * K));
    for (auto& v : a) v = u(gen);
    for (auto& v : x) v = u(gen);
    std::vector<float> y(static_cast<size_t>(B * L), -7.f);
    exec::cpu::matvec_rows(a.data(), x.data(), y.data(), B, L, K);
    for (int64_t r = 0; r < B * L; ++r) {
      const float* ar = a.data() + r * K;
      const float* xb = x.data() + (r / L) * K;
      float acc[16] = {};
      for (int64_t k = 0; k < K; k += 16)
        for (int j = 0; j < 16; ++j) acc[j] = std::fmaf(ar[k + j], xb[k + j], acc[j]);
      for (int w = 8; w > 0; w /= 2)
        for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
      if (avx512)
        ASSERT_EQ(y[static_cast<size_t>(r)], acc[0]) << "K " << K << " row " << r;
      else
        ASSERT_NEAR(y[static_cast<size_t>(r)], acc[0], 1e-5f * (1 + std::fabs(acc[0])));
    }
  }
}

// Large 2-D products on oneDNN's AVX2 sgemm are split between threads by netspec (dot.cpp
// DotSplit): by rows of A (plain, B transposed, A transposed, A transposed with rows padded) and,
// for small M x N over a long K, by blocks of K into partial results summed after (one with B's
// rows padded). Odd sizes leave uneven blocks. Where oneDNN has an AVX-512 matmul (or one
// thread) nothing is split; the values equal ref either way.
TEST(CpuDot, SplitBetweenThreadsMatchesRef) {
  DotDims nn, nt, tn;
  nn.lhs_contracting = {1}, nn.rhs_contracting = {0};
  nt.lhs_contracting = {1}, nt.rhs_contracting = {1};
  tn.lhs_contracting = {0}, tn.rhs_contracting = {0};
  struct Case {
    Shape l, r;
    DotDims d;
    const char* what;
  };
  const std::vector<Case> cases = {
      {{300, 130}, {130, 200}, nn, "rows, plain"},
      {{300, 130}, {200, 130}, nt, "rows, B transposed"},
      {{130, 300}, {130, 200}, tn, "rows, A transposed"},
      {{2048, 256}, {2048, 128}, tn, "rows, A transposed, padded rows"},
      {{1030, 96}, {1030, 72}, tn, "depth"},
      {{2048, 64}, {2048, 256}, tn, "depth, B's rows padded"}};
  const bool split = ThreadPool::global().num_threads() >= 2 &&
                     !exec::cpu::onednn_has_isa(dnnl::cpu_isa::avx512_core);
  for (const Case& c : cases) {
    BodyFn body = [&](Builder& b, const Values& a) { return Values{b.dot_general(a[0], a[1], c.d)}; };
    Tensor x = random(DType::kF32, c.l, 23), y = random(DType::kF32, c.r, 24);
    EXPECT_EQ(cpu_plan_stats(std::vector<Tensor>{x, y}, body).split_dots, split ? 1 : 0) << c.what;
    check_against_ref({x, y}, body, 1e-4, c.what);
  }
}

// small_gemm (the per-batch kernel of small strided products) against a double loop, on its
// AVX2 tiles and, where the CPU has them, its AVX-512 ones (the same bits as the AVX2 ones):
// A row- and column-major, B with contiguous columns, contiguous k (the 8x8 transposed pack) or
// neither; row tails (M % 6 from 1 to 5, M % 8), column tails (N % 16, N % 32), k tails (K % 8), a padded C.
TEST(CpuDot, SmallGemmStrides) {
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> u(-1, 1);
  const bool wide = exec::cpu::small_gemm_avx512_runs();
  for (int64_t M : {1, 4, 6, 11, 13, 14, 15, 16}) for (int64_t N : {1, 16, 19, 32, 37, 64}) for (int64_t K : {1, 8, 21}) {
    std::vector<float> a(static_cast<size_t>(M * K * 3)), b(static_cast<size_t>(K * N * 3));
    for (auto& x : a) x = u(gen);
    for (auto& x : b) x = u(gen);
    const int64_t ldc = N + 3;
    // (am, ak): row-major with padded rows, column-major; (bk, bn): columns contiguous with
    // padded rows, k contiguous (bn = K + 2), both strided (bk = 2, bn = 2K + 1).
    for (auto [am, ak] : {std::pair<int64_t, int64_t>{K + 2, 1}, {1, M}})
      for (auto [bk, bn] : {std::pair<int64_t, int64_t>{N + 1, 1}, {1, K + 2}, {2, 2 * K + 1}}) {
        std::vector<float> c(static_cast<size_t>(M * ldc), -7.f);
        exec::cpu::small_gemm(M, N, K, a.data(), am, ak, b.data(), bk, bn, c.data(), ldc, false);
        if (wide) {
          std::vector<float> c512(c.size(), -7.f);
          exec::cpu::small_gemm(M, N, K, a.data(), am, ak, b.data(), bk, bn, c512.data(), ldc, true);
          for (size_t i = 0; i < c.size(); ++i)
            ASSERT_EQ(c512[i], c[i]) << "AVX-512 tiles: M " << M << " N " << N << " K " << K
                                     << " am " << am << " bk " << bk << " bn " << bn << " at " << i;
        }
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < ldc; ++j) {
            const float got = c[static_cast<size_t>(i * ldc + j)];
            if (j >= N) {  // the padding of C's rows is left alone
              ASSERT_EQ(got, -7.f);
              continue;
            }
            double want = 0;
            for (int64_t k = 0; k < K; ++k)
              want += double(a[static_cast<size_t>(i * am + k * ak)]) *
                      double(b[static_cast<size_t>(k * bk + j * bn)]);
            ASSERT_NEAR(got, want, 1e-5 * (1 + K)) << "M " << M << " N " << N << " K " << K
                                                  << " am " << am << " bk " << bk << " bn " << bn
                                                  << " at " << i << "," << j;
          }
      }
  }
}

// Attention's products with q, k, v read in place as [B, T, H, D] (batch dims B and H apart):
// one product per batch on small_gemm (its AVX-512 tiles where the CPU has them, the AVX2 ones
// in exec_capped_avx2); larger ones on oneDNN's strided brgemm matmul with AVX-512, else an
// sgemm per batch. Odd sizes give every tail.
TEST(CpuDot, AttentionFormsInPlace) {
  // T 150: past the AVX2 tiles' 128³ multiply-adds; T 260: past the AVX-512 tiles' 256³.
  for (auto [T, D] : {std::pair<int64_t, int64_t>{13, 5}, {21, 19}, {150, 140}, {260, 140}}) {
    const Shape bthd{3, T, 2, D}, bhtt{3, 2, T, T};
    DotDims qk;  // q·kᵀ
    qk.lhs_batching = {0, 2}, qk.rhs_batching = {0, 2};
    qk.lhs_contracting = {3}, qk.rhs_contracting = {3};
    check_dot(bthd, bthd, qk, DType::kF32, "q.kT T " + std::to_string(T));
    DotDims pv;  // p·v
    pv.lhs_batching = {0, 1}, pv.rhs_batching = {0, 2};
    pv.lhs_contracting = {3}, pv.rhs_contracting = {1};
    check_dot(bhtt, bthd, pv, DType::kF32, "p.v T " + std::to_string(T));
    DotDims dv;  // pᵀ·do with do [B, T, H, D]
    dv.lhs_batching = {0, 1}, dv.rhs_batching = {0, 2};
    dv.lhs_contracting = {2}, dv.rhs_contracting = {1};
    check_dot(bhtt, bthd, dv, DType::kF32, "pT.do T " + std::to_string(T));
  }
}

// oneDNN's AVX2 sgemm (gemm:jit) is 1.3-2x slower on operands stored contraction-dim-outermost
// with rows of a multiple of 256 floats; dot.cpp copies those to padded rows when each element
// is reused >= 64 times. Where that kernel runs (no AVX-512: exec_capped_avx2 runs this test),
// exactly the three eligible dots are padded, and every result still equals ref's.
// Row gathers (embedding lookups) and row scatter-adds (their VJP) run on the cpu kernels:
// rank-3 tables, i32 indices [4, 6, 1] and i64 indices with the index vector dim implicit,
// repeated rows (scatter accumulates them) and out-of-range ones (gather clamps, scatter skips).
TEST(CpuIndexed, RowGatherAndScatterAddMatchRef) {
  hlo::GatherDims g;
  g.offset_dims = {2, 3};
  g.collapsed_slice_dims = {0};
  g.start_index_map = {0};
  g.index_vector_dim = 2;
  hlo::ScatterDims sd;
  sd.update_window_dims = {2, 3};
  sd.inserted_window_dims = {0};
  sd.scatter_dims_to_operand_dims = {0};
  sd.index_vector_dim = 2;
  auto add = [](Builder& r, const Values& p) { return Values{r.add(p[0], p[1])}; };
  std::vector<int64_t> ids(24);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int64_t(i * 7 % 13);
  ids[3] = -3, ids[10] = 50, ids[17] = 99, ids[20] = 49, ids[21] = 0;
  for (DType dt : {DType::kF32, DType::kF64}) {
    BodyFn body = [&](Builder& b, const Values& a) {
      Value* rows = b.gather(a[0], a[1], g, {1, 3, 7});  // [4, 6, 3, 7]
      Value* up = b.multiply(rows, a[2]);
      Value* grad = b.scatter({a[0]}, a[1], {up}, sd, add)[0];
      hlo::ScatterDims si = sd;
      si.index_vector_dim = 2;  // [4, 6] i64 indices: the index vector dim is implicit
      Value* grad2 = b.scatter({grad}, a[3], {up}, si, add)[0];
      hlo::GatherDims gi = g;
      return Values{rows, grad, grad2, b.gather(a[0], a[3], gi, {1, 3, 7})};
    };
    std::vector<int64_t> ids64(ids);
    check_against_ref({random(dt, {50, 3, 7}, 1), i32({4, 6, 1}, ids), random(dt, {4, 6, 3, 7}, 2),
                       i64({4, 6}, ids64)},
                      body, 1e-6, "rows " + std::string(dtype_name(dt)));
  }
}

TEST(CpuDot, PaddedOperandRowsOnTheAvx2Gemm) {
  auto dot = [](Builder& b, Value* l, Value* r, hlo::I64s lb, hlo::I64s lc, hlo::I64s rb,
                hlo::I64s rc) {
    DotDims d;
    d.lhs_batching = lb, d.lhs_contracting = lc, d.rhs_batching = rb, d.rhs_contracting = rc;
    return b.dot_general(l, r, d);
  };
  const std::vector<Tensor> in = {
      random(DType::kF32, {128, 256}, 41),   random(DType::kF32, {128, 80}, 42),
      random(DType::kF32, {70, 96}, 43),     random(DType::kF32, {96, 512}, 44),
      random(DType::kF32, {2, 40, 256}, 45), random(DType::kF32, {2, 40, 64}, 46),
      random(DType::kF32, {8, 96}, 47),      random(DType::kF32, {96, 300}, 48)};
  auto body = [&](Builder& b, const Values& a) {
    return Values{dot(b, a[0], a[1], {}, {0}, {}, {0}),    // [K, M=256]^T x [K, 80]: lhs padded
                  dot(b, a[2], a[3], {}, {1}, {}, {0}),    // [70, K] x [K, N=512]: rhs padded
                  dot(b, a[4], a[5], {0}, {1}, {0}, {1}),  // batched, lhs [B, K, 256]: padded
                  dot(b, a[6], a[3], {}, {1}, {}, {0}),    // M = 8: too little reuse
                  dot(b, a[2], a[7], {}, {1}, {}, {0})};   // N = 300: rows not a multiple of 256
  };
  std::vector<Type> ts;
  for (const Tensor& t : in) ts.push_back(type_of(t));
  const bool gemm_jit = !exec::cpu::onednn_has_isa(dnnl::cpu_isa::avx512_core);
  // Forced on (the default but on Zen 1, where the copies only cost), then off.
  ::setenv("NETSPEC_DOT_PAD", "1", 1);
  EXPECT_EQ(exec::cpu::plan_stats(*make_module(ts, body)->funcs[0]).padded_dots, gemm_jit ? 3 : 0);
  check_against_ref(in, body, 1e-4, "padded dot rows");
  ::setenv("NETSPEC_DOT_PAD", "0", 1);
  EXPECT_EQ(exec::cpu::plan_stats(*make_module(ts, body)->funcs[0]).padded_dots, 0);
  check_against_ref(in, body, 1e-4, "unpadded dot rows");
  ::unsetenv("NETSPEC_DOT_PAD");
  __builtin_cpu_init();
  const bool zen1 = __builtin_cpu_is("znver1") != 0;
  EXPECT_EQ(exec::cpu::plan_stats(*make_module(ts, body)->funcs[0]).padded_dots,
            gemm_jit && !zen1 ? 3 : 0);
}

TEST(CpuReduce, SumsMaxAndPooling) {
  Tensor x = random(DType::kF32, {4, 5, 6, 7}, 31);
  for (auto dims : std::vector<hlo::I64s>{{3}, {0}, {0, 2, 3}, {1, 2}, {0, 1, 2, 3}, {}}) {
    for (OpKind k : {OpKind::kAdd, OpKind::kMaximum}) {
      check_against_ref(
          {x},
          [&](Builder& b, const Values& a) {
            return Values{
                b.reduce(a[0], b.scalar(k == OpKind::kAdd ? 0.0 : -kInf, DType::kF32), dims, k)};
          },
          1e-5, "reduce");
    }
  }
  // Row max/min over L contiguous values (the vector path for L >= 16: two 8-lane vectors, then
  // a tail): bit for bit the ref's in-order fold, with ±0 ties, a row holding a NaN, one holding
  // two (the ref's order picks which), ±inf, a row of negatives whose extremum is the init (0.5
  // and -0.5 below) and one whose max is a zero among negatives.
  for (int64_t L : {70, 16, 23, 48}) {
    Tensor r = random(DType::kF32, {8, L}, 32);
    float* v = r.data<float>();
    auto at = [&](int64_t row, int64_t j) -> float& { return v[row * L + j % L]; };
    at(0, 3) = -0.f, at(0, 40) = 0.f, at(0, 41) = -0.f;  // the max may be a zero only if all <= 0
    for (int64_t j = 0; j < L; ++j) at(1, j) = j % 2 ? -0.f : 0.f;  // +0 wins max, -0 min
    at(2, 50) = std::numeric_limits<float>::quiet_NaN();
    at(3, 20) = std::bit_cast<float>(0x7fc00001u), at(3, 60) = std::bit_cast<float>(0x7fc00002u);
    at(4, 33) = kInf, at(5, L - 1) = -kInf;
    for (int64_t j = 0; j < L; ++j) at(6, j) = -1.f - std::fabs(at(6, j));  // all below -1
    for (int64_t j = 0; j < L; ++j) at(7, j) = j == L / 2 ? -0.f : -1.f - float(j);
    for (OpKind k : {OpKind::kMaximum, OpKind::kMinimum}) {
      for (double init : {k == OpKind::kMaximum ? -kInf : kInf, 0.5, -0.5}) {
        BodyFn body = [&](Builder& b, const Values& a) {
          return Values{b.reduce(a[0], b.scalar(init, DType::kF32), {1}, k)};
        };
        auto want = run_fn("ref", {r}, body), got = run_fn("cpu", {r}, body);
        for (int64_t i = 0; i < 8; ++i)
          EXPECT_EQ(std::bit_cast<uint32_t>(got[0].data<float>()[i]),
                    std::bit_cast<uint32_t>(want[0].data<float>()[i]))
              << op_name(k) << " L " << L << " init " << init << " row " << i;
      }
    }
  }
  hlo::WindowOptions w;  // 3x3 stride-2 max pool with asymmetric padding on NCHW
  w.window_dimensions = {1, 1, 3, 3};
  w.window_strides = {1, 1, 2, 2};
  w.padding = {{0, 0}, {0, 0}, {1, 0}, {1, 1}};
  for (OpKind k : {OpKind::kMaximum, OpKind::kAdd}) {
    check_against_ref(
        {x},
        [&](Builder& b, const Values& a) {
          return Values{
              b.reduce_window(a[0], b.scalar(k == OpKind::kAdd ? 0.0 : -kInf, DType::kF32), w, k)};
        },
        1e-5, "pool");
  }
}

TEST(CpuReduce, BatchNormSumsAreVectorisedDeterministicAndAccurate) {
  // BN's per-channel sum over [N, C, H, W] dims {0, 2, 3} and a row sum: by default long
  // contiguous runs use partial sums, stay within f32 rounding of an f64 sum and repeat bit for
  // bit; NETSPEC_FAST_SUM=0 gives the exact ref order.
  Tensor x = random(DType::kF32, {16, 3, 20, 33}, 51);
  BodyFn body = [](Builder& b, const Values& a) {
    Value* z = b.scalar(0.0, DType::kF32);
    return Values{b.reduce(a[0], z, {0, 2, 3}, OpKind::kAdd),
                  b.reduce(a[0], z, {1, 2, 3}, OpKind::kAdd)};
  };
  ::setenv("NETSPEC_FAST_SUM", "0", 1);
  auto exact = run_fn("cpu", {x}, body), want = run_fn("ref", {x}, body);
  ::unsetenv("NETSPEC_FAST_SUM");
  for (size_t i = 0; i < exact.size(); ++i)
    expect_equal(exact[i], want[i], "FAST_SUM=0: ref order");
  check_against_ref({x}, body, 2e-4, "bn sums");  // 10^4 terms with cancellation: order matters
  auto r1 = run_fn("cpu", {x}, body), r2 = run_fn("cpu", {x}, body);
  bool differs = false;  // the default really is the partial-sum order, not the ref's
  for (size_t i = 0; i < r1.size(); ++i)
    for (int64_t j = 0; j < r1[i].numel(); ++j)
      differs |= r1[i].data<float>()[j] != want[i].data<float>()[j];
  EXPECT_TRUE(differs);
  for (size_t i = 0; i < r1.size(); ++i) expect_equal(r1[i], r2[i], "repeat");
  const float* p = x.data<float>();
  for (int64_t c = 0; c < 3; ++c) {
    double want = 0;
    for (int64_t n = 0; n < 16; ++n)
      for (int64_t k = 0; k < 660; ++k) want += p[(n * 3 + c) * 660 + k];
    EXPECT_NEAR(r1[0].data<float>()[c], want, 1e-6 * 10560) << c;
  }
}

// Sums over leading dims with few columns (bias gradients [tokens, features]) split the rows
// between threads (reduce.cpp row_split): the init counted once, within f32 rounding of a double
// sum, the same bits run to run; f64 too; NETSPEC_FAST_SUM=0 and max keep the ref's order.
TEST(CpuReduce, LeadingDimSumsSplitRowsBetweenThreads) {
  Tensor x = random(DType::kF32, {4099, 20}, 71), y = random(DType::kF32, {32, 64, 128}, 72);
  Tensor xd = random(DType::kF64, {1500, 44}, 73);
  BodyFn body = [](Builder& b, const Values& a) {
    return Values{b.reduce(a[0], b.scalar(0.5, DType::kF32), {0}, OpKind::kAdd),
                  b.reduce(a[1], b.scalar(0.0, DType::kF32), {0, 1}, OpKind::kAdd),
                  b.reduce(a[2], b.scalar(0.0, DType::kF64), {0}, OpKind::kAdd),
                  b.reduce(a[0], b.scalar(-kInf, DType::kF32), {0}, OpKind::kMaximum)};
  };
  auto got = run_fn("cpu", {x, y, xd}, body), again = run_fn("cpu", {x, y, xd}, body);
  auto want = run_fn("ref", {x, y, xd}, body);
  for (size_t i = 0; i < got.size(); ++i) expect_equal(got[i], again[i], "repeat");
  expect_equal(got[3], want[3], "max: ref order");
  const float* px = x.data<float>();
  for (int64_t k = 0; k < 20; ++k) {
    double s = 0.5;
    for (int64_t r = 0; r < 4099; ++r) s += px[r * 20 + k];
    EXPECT_NEAR(got[0].data<float>()[k], s, 3e-3) << k;  // f32 rounding of 4099 terms; a row is ~1
  }
  const float* py = y.data<float>();
  for (int64_t k = 0; k < 128; k += 9) {
    double s = 0;
    for (int64_t r = 0; r < 2048; ++r) s += py[r * 128 + k];
    EXPECT_NEAR(got[1].data<float>()[k], s, 2e-3) << k;
  }
  expect_near(got[2], want[2], 1e-12, 1e-12, "f64");
  ::setenv("NETSPEC_FAST_SUM", "0", 1);
  auto exact = run_fn("cpu", {x, y, xd}, body);
  ::unsetenv("NETSPEC_FAST_SUM");
  for (size_t i = 0; i < exact.size(); ++i) expect_equal(exact[i], want[i], "FAST_SUM=0");
}

TEST(CpuShape, PadAndClamp) {
  // pad as the slice VJP emits it (zeros around a block; each output row written once), of one
  // dim, and with interior padding; clamp with 0-d and full-shape bounds.
  Tensor x = random(DType::kF32, {3, 5, 7}, 61), lo = random(DType::kF32, {3, 5, 7}, 62);
  check_against_ref(
      {x, lo},
      [](Builder& b, const Values& a) {
        Value* z = b.scalar(0.5, DType::kF32);
        Value* p1 = b.pad(a[0], z, {0, 2, 1}, {1, 0, 3}, {0, 0, 0});
        Value* p2 = b.pad(a[0], z, {1, 0, 0}, {0, 1, 2}, {1, 2, 0});
        Value* p3 = b.pad(b.reshape(a[0], {105}), z, {3}, {2}, {0});  // one dim
        Value* c1 = b.clamp(b.scalar(-0.3, DType::kF32), a[0], b.scalar(0.4, DType::kF32));
        Value* c2 = b.clamp(a[1], a[0], b.scalar(0.2, DType::kF32));
        return Values{p1, p2, p3, c1, c2};
      },
      0, "pad/clamp");
}

TEST(CpuShape, TransposeBroadcastSliceReverseConcat) {
  Tensor x = random(DType::kF32, {3, 40, 50}, 41);
  Tensor v = random(DType::kF32, {50}, 42);
  check_against_ref(
      {x, v},
      [](Builder& b, const Values& a) {
        Value* t = b.transpose(a[0], {2, 0, 1});
        Value* bc = b.broadcast_in_dim(a[1], {3, 40, 50}, {2});
        Value* s = b.slice(a[0], {1, 3, 0}, {3, 40, 50}, {1, 2, 3});
        Value* r = b.reverse(a[0], {0, 2});
        Value* c = b.concatenate({a[0], r, bc}, 1);
        return Values{t, b.add(bc, a[0]), s, c};
      },
      0, "shape ops");
}

TEST(CpuShape, PixelShuffleTransposes) {
  // The 2x2 pixel shuffles of a transposed convolution (unetUp): rows of two elements, so the
  // copy walks its outer index as an odometer; big enough to split across threads mid-row-set.
  for (DType dt : {DType::kF32, DType::kF64}) {
    Tensor x = random(dt, {8, 14, 14, 32, 2, 2}, 71), y = random(dt, {8, 32, 14, 2, 14, 2}, 72);
    Tensor z = random(dt, {3, 5, 1, 7, 3}, 73);
    check_against_ref(
        {x, y, z},
        [](Builder& b, const Values& a) {
          return Values{b.transpose(a[0], {0, 3, 1, 4, 2, 5}),
                        b.transpose(a[1], {0, 2, 4, 1, 3, 5}), b.transpose(a[2], {4, 2, 0, 3, 1}),
                        b.transpose(a[2], {1, 0, 2, 4, 3})};
        },
        0, "pixel shuffle");
  }
}

}  // namespace
}  // namespace netspec::testing
