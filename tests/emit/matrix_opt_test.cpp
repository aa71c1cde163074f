// Muon and Shampoo in the optimizer / train-step module, step by step against a PyTorch reference
// of the same formulas (matrix_opt_reference.py: Shampoo's inverse 4th roots there come from an
// f64 eigendecomposition, the fallback from torch.optim.AdamW), on the shapes each rule treats
// differently: tall and wide Muon matrices, a square Shampoo matrix, biases, and a low-rank
// gradient that leaves L and R singular (only the ridge keeps them invertible).
#include "optim/matrix_opt.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/npy.h"
#include "core/process_env.h"
#include "emit_test_util.h"
#include "reference_util.h"

namespace netspec::emit::testing {
namespace {

namespace fs = std::filesystem;

NetSpec matrix_net() {  // weights [16,5] tall, [16,16] square, [20,16] tall, [6,20] wide
  return NetBuilder("mat")
      .input(5)
      .add(Dense{5, 16, Activation::relu})
      .add(Dense{16, 16, Activation::relu})
      .add(Dense{16, 20, Activation::relu})
      .add(Dense{20, 6})
      .build();
}

// Step k's gradient of parameter i: dense random, except step 2's matrices are rank 2 (u·vᵀ sums).
Tensor step_grad(const ParamDesc& p, DType dt, int k, size_t i) {
  hlo::Type t = hlo::Type::tensor(dt, p.shape);
  if (k != 2 || p.shape.size() != 2) return random_tensor(t, 1000 * k + i);
  const int64_t r = p.shape[0], c = p.shape[1];
  Tensor u = random_tensor(hlo::Type::tensor(DType::kF64, {2, r}), 7000 + i);
  Tensor v = random_tensor(hlo::Type::tensor(DType::kF64, {2, c}), 8000 + i);
  std::vector<double> g(static_cast<size_t>(r * c));
  for (int64_t a = 0; a < r; ++a)
    for (int64_t b = 0; b < c; ++b)
      g[a * c + b] = u.as_double(a) * v.as_double(b) + u.as_double(r + a) * v.as_double(c + b);
  if (dt == DType::kF64) return Tensor::from<double>(dt, p.shape, g);
  return Tensor::from<float>(dt, p.shape, std::vector<float>(g.begin(), g.end()));
}

struct Case {
  OptimizerKind kind;
  DType dtype;
  std::string backend;
  bool nesterov;
  double tol;  // max |netspec - reference| / max |reference step|
};

void run_case(const Case& cs) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  const NetSpec net = matrix_net();
  const ParamTable t = build_param_table(net);
  EmitOptions o;
  o.dtype = cs.dtype;
  o.optim.kind = cs.kind;
  o.optim.momentum = 0.9;
  o.optim.nesterov = cs.nesterov;
  o.optim.beta2 = 0.95;
  o.optim.eps = 1e-8;
  o.optim.weight_decay = 0.1;
  const double lr = 0.05;
  const int steps = 4;
  Emitted e = emit_module(net, t, ModuleKind::optimizer, o);
  auto exe =
      exec::make_backend(cs.backend)->load(std::shared_ptr<const hlo::Module>(std::move(e.module)));

  const fs::path dir = fs::temp_directory_path() /
                       fmt::format("netspec_matrix_opt_{}_{}", getpid(), enum_name(cs.kind));
  fs::create_directories(dir);
  const size_t n = t.params.size();
  std::vector<Tensor> params, state;
  nlohmann::json meta = {{"kind", enum_name(cs.kind)}, {"lr", lr},      {"momentum", 0.9},
                         {"nesterov", cs.nesterov},    {"beta2", 0.95}, {"eps", 1e-8},
                         {"weight_decay", 0.1},        {"steps", steps}};
  int matrices = 0;
  for (size_t i = 0; i < n; ++i) {
    const ParamDesc& p = t.params[i];
    params.push_back(random_tensor(hlo::Type::tensor(cs.dtype, p.shape), 10 + i));
    write_npy((dir / fmt::format("p{}.npy", i)).string(), params.back());
    const bool lw = p.init == ParamInit::linearWeight;
    meta["params"].push_back(
        {{"name", p.name}, {"shape", p.shape}, {"decay", p.decay}, {"linear_weight", lw}});
    matrices +=
        cs.kind == OptimizerKind::muon ? optim::muon_eligible(p) : optim::shampoo_eligible(p);
  }
  EXPECT_EQ(matrices, cs.kind == OptimizerKind::muon ? 4 : 1);
  for (int s = 0; s < 2; ++s)
    for (size_t i = 0; i < n; ++i) state.emplace_back(cs.dtype, t.params[i].shape);
  std::vector<std::vector<Tensor>> outs;
  for (int k = 1; k <= steps; ++k) {
    std::vector<Tensor> in = params;
    for (size_t i = 0; i < n; ++i) {
      in.push_back(step_grad(t.params[i], cs.dtype, k, i));
      write_npy((dir / fmt::format("g{}_{}.npy", k, i)).string(), in.back());
    }
    in.insert(in.end(), state.begin(), state.end());
    in.push_back(cs.dtype == DType::kF64 ? Tensor::from<double>(DType::kF64, {}, {lr})
                                         : Tensor::scalar_f32(static_cast<float>(lr)));
    in.push_back(Tensor::from<int>(DType::kI32, {}, {k}));
    std::vector<Tensor> out = exe->run("main", in);
    ASSERT_EQ(out.size(), 3 * n);
    params.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n));
    state.assign(out.begin() + static_cast<std::ptrdiff_t>(n), out.end());
    outs.push_back(params);
  }
  std::ofstream(dir / "meta.json") << meta.dump();
  export_openblas_coretype();
  const std::string cmd = fmt::format("{} {}/tests/emit/matrix_opt_reference.py {}",
                                      reference::kPython, NETSPEC_SOURCE_DIR, dir.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<Tensor> prev;
  double worst_ratio = 0;
  for (size_t i = 0; i < n; ++i)
    prev.push_back(read_npy((dir / fmt::format("p{}.npy", i)).string()));
  for (int k = 1; k <= steps; ++k) {
    for (size_t i = 0; i < n; ++i) {
      Tensor ref = read_npy((dir / fmt::format("out{}_{}.npy", k, i)).string());
      double step = 0, diff = 0;
      for (int64_t j = 0; j < ref.numel(); ++j) {
        step = std::max(step, std::abs(ref.as_double(j) - prev[i].as_double(j)));
        diff = std::max(diff, std::abs(ref.as_double(j) - outs[k - 1][i].as_double(j)));
      }
      EXPECT_GT(step, 1e-4) << t.params[i].name << " step " << k;  // it really moved
      worst_ratio = std::max(worst_ratio, diff / step);
      EXPECT_LE(diff, cs.tol * step)
          << t.params[i].name << " step " << k << ": max |diff| " << diff << ", step " << step;
      prev[i] = ref;
    }
  }
  std::cout << "[ ref ] " << enum_name(cs.kind) << " " << dtype_name(cs.dtype) << " on "
            << cs.backend << ": max |netspec - torch| / max |step| over 4 steps = " << worst_ratio
            << "\n";
  fs::remove_all(dir);
}

TEST(MatrixOptReference, MuonF64RefMatchesTorch) {
  run_case({OptimizerKind::muon, DType::kF64, "ref", false, 1e-10});
}
TEST(MatrixOptReference, MuonNesterovF32CpuMatchesTorch) {
  run_case({OptimizerKind::muon, DType::kF32, "cpu", true, 1e-4});
}
TEST(MatrixOptReference, ShampooF64RefMatchesTorchEigh) {
  run_case({OptimizerKind::shampoo, DType::kF64, "ref", false, 1e-10});
}
TEST(MatrixOptReference, ShampooF32CpuMatchesTorchEigh) {
  run_case({OptimizerKind::shampoo, DType::kF32, "cpu", false, 1e-4});
}

TEST(MatrixOpt, ShampooFirstStepIsThePolarFactor) {
  // With L = G·Gᵀ, R = Gᵀ·G (bias-corrected first step) L^{-1/4}·G·R^{-1/4} = U·Vᵀ for a
  // full-rank square G: its singular values are all 1 up to the ridge.
  NetSpec net = NetBuilder("sq").input(16).add(Dense{16, 16}).build();
  ParamTable t = build_param_table(net);
  EmitOptions o;
  o.dtype = DType::kF64;
  o.optim.kind = OptimizerKind::shampoo;
  Emitted e = emit_module(net, t, ModuleKind::optimizer, o);
  std::vector<Tensor> in;
  Tensor w(DType::kF64, {16, 16}), bias(DType::kF64, {16});
  // Well conditioned (singular values ~1.5..2.5), so the ridge δ ~ 4e-4 moves them by < 1e-4.
  Tensor g = random_tensor(hlo::Type::tensor(DType::kF64, {16, 16}), 5);
  for (int64_t i = 0; i < 256; ++i)
    g.data<double>()[i] = 0.2 * g.data<double>()[i] + (i % 17 == 0 ? 2 : 0);
  in = {w,
        bias,
        g,
        bias,
        Tensor(DType::kF64, {16, 16}),
        bias,
        Tensor(DType::kF64, {16, 16}),
        bias,
        Tensor::from<double>(DType::kF64, {}, {1.0}),
        Tensor::from<int>(DType::kI32, {}, {1})};
  std::vector<Tensor> out = run_main(*e.module, in);
  // Q = -(new w): Qᵀ·Q must be the identity.
  double worst = 0;
  for (int a = 0; a < 16; ++a)
    for (int c = 0; c < 16; ++c) {
      double s = 0;
      for (int r = 0; r < 16; ++r) s += out[0].as_double(r * 16 + a) * out[0].as_double(r * 16 + c);
      worst = std::max(worst, std::abs(s - (a == c ? 1.0 : 0.0)));
    }
  EXPECT_LT(worst, 1e-3);
}

}  // namespace
}  // namespace netspec::emit::testing
