// Benchmark (not a test): the cpu executor's dot_general at 1024x1024x1024 f32, in GFLOP/s,
// beside the best sgemm of this machine measured in the same run. Target: >= 70 % of it.
// `bench_dot shapes`: the 2-D GEMMs of vit-cifar-tiny's train step (M = 32·64 tokens, K and N
// from dim 128 / mlp 256 / qkv 384; "nt": A·Bᵀ, the forwards, "nn" the input gradients, "tn":
// Aᵀ·B, the weight gradients) on the executor beside
// OpenBLAS's cblas_sgemm and oneDNN's dnnl_sgemm, ms per call.
// `bench_dot mlp`: the mlp zoo net's products at batch 128 ("nt": A·Bᵀ, weights stored [out, in]).
// `bench_dot attention`: vit-cifar-tiny's batched attention products, operands read in place.
// `bench_dot scan`: mamba-lm's per-time-step matrix-vector products (kernels/matvec.cpp).
// Run: build/<dir>/bench/bench_dot [shapes|mlp|attention|small|scan]
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "exec/backend.h"
#include "exec/cpu/kernels.h"
#include "hlo/builder.h"

using namespace netspec;

namespace {

// C[m, n] = A·B (A [m, k]), Aᵀ·B (A [k, m], ta) or A·Bᵀ (B [n, k], tb) on the executor,
// OpenBLAS and oneDNN, ms.
void time_shape(int64_t m, int64_t k, int64_t n, bool ta, bool tb = false) {
  auto mod = std::make_shared<hlo::Module>();
  const Shape as = ta ? Shape{k, m} : Shape{m, k};
  const Shape bs = tb ? Shape{n, k} : Shape{k, n};
  hlo::Func* f = mod->add_func("main", {hlo::Type::tensor(DType::kF32, as),
                                        hlo::Type::tensor(DType::kF32, bs)});
  hlo::Builder b(f->body.get());
  hlo::DotDims d;
  d.lhs_contracting = {ta ? 0 : 1};
  d.rhs_contracting = {tb ? 1 : 0};
  b.func_return({b.dot_general(f->arg(0), f->arg(1), d)});
  auto exe = exec::make_backend("cpu")->load(mod);
  Tensor x(DType::kF32, as), y(DType::kF32, bs);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 7) * 0.1f;
  for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = static_cast<float>(i % 5) * 0.2f;
  std::vector<Tensor> in{x, y};
  std::vector<float> c(static_cast<size_t>(m * n));
  const int im = static_cast<int>(m), ik = static_cast<int>(k), in_ = static_cast<int>(n);
  const double ns = bench::time_median([&] { exe->run("main", in); }, 5, 41);
  const double ob = bench::time_median([&] {
    cblas_sgemm(101, ta ? 112 : 111, tb ? 112 : 111, im, in_, ik, 1.0f, x.data<float>(),
                ta ? im : ik, y.data<float>(), tb ? ik : in_, 0.0f, c.data(), in_);
  }, 5, 41);
  const double dn = bench::time_median([&] {
    dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, x.data<float>(), ta ? m : k,
               y.data<float>(), tb ? k : n, 0.0f, c.data(), n);
  }, 5, 41);
  const double gf = 2.0 * double(m * k * n) / 1e9;
  std::printf("%-3s m %5lld k %5lld n %5lld   executor %6.3f ms (%5.1f GFLOP/s)   OpenBLAS %6.3f ms "
              "(%5.1f)   dnnl_sgemm %6.3f ms (%5.1f)\n",
              ta ? "tn" : tb ? "nt" : "nn", static_cast<long long>(m), static_cast<long long>(k),
              static_cast<long long>(n), ns * 1e3, gf / ns, ob * 1e3, gf / ob, dn * 1e3, gf / dn);
}

// One dot_general on the executor, ms per call (median): attention's batched products.
void time_dot(const char* what, const Shape& ls, const Shape& rs, const hlo::DotDims& d) {
  auto mod = std::make_shared<hlo::Module>();
  hlo::Func* f = mod->add_func("main", {hlo::Type::tensor(DType::kF32, ls),
                                        hlo::Type::tensor(DType::kF32, rs)});
  hlo::Builder b(f->body.get());
  hlo::Value* r = b.dot_general(f->arg(0), f->arg(1), d);
  b.func_return({r});
  auto exe = exec::make_backend("cpu")->load(mod);
  Tensor x(DType::kF32, ls), y(DType::kF32, rs);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i % 7) * 0.1f;
  for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = static_cast<float>(i % 5) * 0.2f;
  std::vector<Tensor> in{x, y};
  const double s = bench::time_median([&] { exe->run("main", in); }, 5, 41);
  int64_t k = 1;
  for (int64_t c : d.lhs_contracting) k *= ls[static_cast<size_t>(c)];
  const double gf = 2.0 * double(r->type.numel() * k) / 1e9;
  std::printf("%-34s %7.3f ms (%5.1f GFLOP/s)\n", what, s * 1e3, gf / s);
}

// vit-cifar-tiny's attention products at batch 32 (4 heads of 32 over 64 tokens), operands as
// the train step holds them: q, k, v [B, T, H, D], scores and probabilities [B, H, T, T].
void attention_dots() {
  const Shape bthd{32, 64, 4, 32}, bhtt{32, 4, 64, 64}, bhtd{32, 4, 64, 32};
  hlo::DotDims qk;  // s = q·kᵀ: [B, T, H, D] x [B, T, H, D] -> [B, H, T, T]
  qk.lhs_batching = {0, 2}, qk.rhs_batching = {0, 2};
  qk.lhs_contracting = {3}, qk.rhs_contracting = {3};
  time_dot("q.kT  (bthd, bthd -> bhtt)", bthd, bthd, qk);
  hlo::DotDims pv;  // o = p·v: [B, H, T, T] x [B, T, H, D] -> [B, H, T, D]
  pv.lhs_batching = {0, 1}, pv.rhs_batching = {0, 2};
  pv.lhs_contracting = {3}, pv.rhs_contracting = {1};
  time_dot("p.v   (bhtt, bthd -> bhtd)", bhtt, bthd, pv);
  hlo::DotDims dp;  // dp = do·vᵀ: [B, H, T, D] x [B, T, H, D] -> [B, H, T, T]
  dp.lhs_batching = {0, 1}, dp.rhs_batching = {0, 2};
  dp.lhs_contracting = {3}, dp.rhs_contracting = {3};
  time_dot("do.vT (bhtd, bthd -> bhtt)", bhtd, bthd, dp);
  hlo::DotDims dv;  // dv = pᵀ·do: [B, H, T, T] x [B, H, T, D] -> [B, H, T, D]
  dv.lhs_batching = {0, 1}, dv.rhs_batching = {0, 1};
  dv.lhs_contracting = {2}, dv.rhs_contracting = {2};
  time_dot("pT.do (bhtt, bhtd -> bhtd)", bhtt, bhtd, dv);
}

// small_gemm alone on one thread, its AVX2 tiles against its AVX-512 ones (where the CPU has
// them), alternating: attention's four per-(batch, head) forms with the train step's strides.
void small_gemm_tiles() {
  constexpr int64_t B = 32, T = 64, H = 4, D = 32;
  struct Form {
    const char* what;
    int64_t M, N, K, am, ak, bk, bn;
  };
  const Form forms[] = {{"q.kT  (bk = 1: packed)", T, T, D, H * D, 1, 1, H * D},
                        {"p.v   (B in place)", T, D, T, T, 1, H * D, 1},
                        {"do.vT (bk = 1: packed)", T, T, D, D, 1, 1, H * D},
                        {"pT.do (A's k strided)", T, D, T, 1, T, D, 1}};
  std::vector<float> a(B * H * T * T), b(B * H * T * T), c(T * T);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.1f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.2f;
  for (const Form& f : forms) {
    double best[2] = {1e9, 1e9};
    for (int round = 0; round < 10; ++round)
      for (int wide = 0; wide < 2; ++wide) {
        if (wide && !exec::cpu::small_gemm_avx512_runs()) continue;
        const double s = bench::time_median(
            [&] {
              for (int64_t p = 0; p < B * H; ++p)
                exec::cpu::small_gemm(f.M, f.N, f.K, a.data() + p * 8, f.am, f.ak, b.data() + p * 8,
                                      f.bk, f.bn, c.data(), f.N, wide != 0);
            },
            2, 9);
        best[wide] = std::min(best[wide], s);
      }
    const double gf = 2.0 * double(B * H * f.M * f.N * f.K) / 1e9;
    std::printf("%-24s AVX2 tiles %6.3f ms (%5.1f GFLOP/s)  AVX-512 tiles %6.3f ms (%5.1f)\n",
                f.what, best[0] * 1e3, gf / best[0], best[1] * 1e3, gf / best[1]);
  }
}

// mamba-lm's selective-scan products per time step (matvec.cpp): y_t = h_t·C_t and its VJP for C.
void scan_dots() {
  hlo::DotDims y;  // [1, 32, 256, 16] x [1, 32, 16] -> [1, 32, 256]: rows (k innermost)
  y.lhs_batching = {0, 1}, y.rhs_batching = {0, 1};
  y.lhs_contracting = {3}, y.rhs_contracting = {2};
  time_dot("h.C   (rows, k = 16)", {1, 32, 256, 16}, {1, 32, 16}, y);
  hlo::DotDims c;  // [1, 32, 256, 16] x [1, 32, 256] -> [1, 32, 16]: columns (free innermost)
  c.lhs_batching = {0, 1}, c.rhs_batching = {0, 1};
  c.lhs_contracting = {2}, c.rhs_contracting = {2};
  time_dot("hT.dy (columns, l = 16)", {1, 32, 256, 16}, {1, 32, 256}, c);
}

}  // namespace

int main(int argc, char** argv) {
  netspec::ensure_library_environment(argv, /*openblas=*/true);
  if (argc > 1 && std::string(argv[1]) == "shapes") {
    const int64_t t = 32 * 64;
    // forwards X·Wᵀ (weights stored [out, in]): qkv, fc1, fc2, proj
    for (auto [k, n] : {std::pair<int64_t, int64_t>{128, 384}, {128, 256}, {256, 128}, {128, 128}})
      time_shape(t, k, n, false, true);
    // input gradients dY·W
    for (auto [k, n] : {std::pair<int64_t, int64_t>{384, 128}, {256, 128}, {128, 256}, {128, 128}})
      time_shape(t, k, n, false);
    for (auto [m, n] : {std::pair<int64_t, int64_t>{384, 128}, {256, 128}, {128, 256}, {128, 128}})
      time_shape(m, t, n, true);  // weight gradients: Xᵀ·dY over the tokens
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "scan") {
    scan_dots();
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "small") {
    small_gemm_tiles();
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "attention") {
    attention_dots();
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "mlp") {  // the mlp zoo net at batch 128: 784-512-512-10
    time_shape(128, 784, 512, false, true);  // forward, weights [out, in]
    time_shape(128, 512, 512, false, true);
    time_shape(128, 512, 512, false);         // input gradient dY·W
    time_shape(784, 128, 512, true);          // weight gradient Xᵀ·dY
    time_shape(512, 128, 512, true);
    return 0;
  }
  const int64_t n = 1024;
  auto m = std::make_shared<hlo::Module>();
  hlo::Type t = hlo::Type::tensor(DType::kF32, {n, n});
  hlo::Func* f = m->add_func("main", {t, t});
  hlo::Builder b(f->body.get());
  hlo::DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {0};
  b.func_return({b.dot_general(f->arg(0), f->arg(1), d)});
  auto exe = exec::make_backend("cpu")->load(m);
  Tensor x(DType::kF32, {n, n}), y(DType::kF32, {n, n});
  for (int64_t i = 0; i < n * n; ++i) x.data<float>()[i] = static_cast<float>(i % 7) * 0.1f, y.data<float>()[i] = static_cast<float>(i % 5) * 0.2f;
  std::vector<Tensor> in{x, y};
  double flops = 2.0 * n * n * n;
  bench::SgemmBest s = bench::measure_sgemm(static_cast<int>(n));
  double exec_gf = flops / bench::time_median([&] { exe->run("main", in); }) / 1e9;
  bench::print_sgemm(s);
  std::printf("cpu executor dot_general 1024^3   : %7.1f GFLOP/s   = %.0f %% of the best sgemm (target >= 70 %%)\n",
              exec_gf, 100.0 * exec_gf / s.best());
  return 0;
}
