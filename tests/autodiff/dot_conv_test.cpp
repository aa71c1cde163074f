// dot_general and convolution VJPs: random batch/contracting dims and random convolution
// attributes (strides, padding incl. negative, lhs/rhs dilation, reversal, feature groups,
// layouts), checked against finite differences; the gradients are dot_generals / convolutions.
#include <algorithm>
#include <numeric>

#include "test_util.h"

namespace netspec::autodiff::testing {
namespace {

TEST(DotVjp, RandomBatchAndContractingDims) {
  std::mt19937 g(20);
  for (int trial = 0; trial < 10; ++trial) {
    int64_t nb = rand_int(g, 0, 2), nc = rand_int(g, 0, 2), nfa = rand_int(g, 0, 2),
            nfb = rand_int(g, 0, 2);
    Shape bsz, csz, fa, fb;
    for (int64_t i = 0; i < nb; ++i) bsz.push_back(rand_int(g, 1, 3));
    for (int64_t i = 0; i < nc; ++i) csz.push_back(rand_int(g, 1, 3));
    for (int64_t i = 0; i < nfa; ++i) fa.push_back(rand_int(g, 1, 3));
    for (int64_t i = 0; i < nfb; ++i) fb.push_back(rand_int(g, 1, 3));
    // Lay out each operand's dims in a random order.
    auto layout = [&](const Shape& free, I64s& bdims, I64s& cdims, Shape& shape) {
      int64_t r = nb + nc + static_cast<int64_t>(free.size());
      I64s pos(static_cast<size_t>(r));
      std::iota(pos.begin(), pos.end(), 0);
      std::shuffle(pos.begin(), pos.end(), g);
      shape.assign(static_cast<size_t>(r), 0);
      size_t k = 0;
      for (int64_t i = 0; i < nb; ++i, ++k) {
        bdims.push_back(pos[k]);
        shape[static_cast<size_t>(pos[k])] = bsz[static_cast<size_t>(i)];
      }
      for (int64_t i = 0; i < nc; ++i, ++k) {
        cdims.push_back(pos[k]);
        shape[static_cast<size_t>(pos[k])] = csz[static_cast<size_t>(i)];
      }
      for (size_t i = 0; i < free.size(); ++i, ++k) shape[static_cast<size_t>(pos[k])] = free[i];
    };
    hlo::DotDims dd;
    Shape sa, sb;
    layout(fa, dd.lhs_batching, dd.lhs_contracting, sa);
    layout(fb, dd.rhs_batching, dd.rhs_contracting, sb);
    auto m = make_module({f32(sa), f32(sb)}, [&](Builder& b, auto a) {
      return std::vector<Value*>{b.tanh(b.dot_general(a[0], a[1], dd))};
    });
    GradcheckOptions o;
    o.seed = static_cast<uint64_t>(trial);
    expect_grads(*m, o);
  }
}

struct ConvCase {
  int64_t n, c, o, groups;
  Shape in_sp, k_sp;
  I64s strides, lhs_dil, rhs_dil;
  std::vector<std::pair<int64_t, int64_t>> pad;
  std::vector<bool> rev;
  bool nhwc;
};

std::unique_ptr<hlo::Module> conv_module(const ConvCase& k) {
  size_t ns = k.in_sp.size();
  hlo::ConvOptions opt;
  opt.dims = hlo::ConvOptions::nchw(static_cast<int>(ns));
  Shape xs{k.n, k.c}, ws{k.o, k.c / k.groups};
  xs.insert(xs.end(), k.in_sp.begin(), k.in_sp.end());
  ws.insert(ws.end(), k.k_sp.begin(), k.k_sp.end());
  if (k.nhwc) {  // input NHWC, kernel HWIO, output NHWC
    opt.dims.input_batch = 0;
    opt.dims.input_feature = static_cast<int64_t>(ns) + 1;
    opt.dims.input_spatial.clear();
    opt.dims.kernel_output_feature = static_cast<int64_t>(ns) + 1;
    opt.dims.kernel_input_feature = static_cast<int64_t>(ns);
    opt.dims.kernel_spatial.clear();
    opt.dims.output_batch = 0;
    opt.dims.output_feature = static_cast<int64_t>(ns) + 1;
    opt.dims.output_spatial.clear();
    for (size_t i = 0; i < ns; ++i) {
      opt.dims.input_spatial.push_back(static_cast<int64_t>(i + 1));
      opt.dims.kernel_spatial.push_back(static_cast<int64_t>(i));
      opt.dims.output_spatial.push_back(static_cast<int64_t>(i + 1));
    }
    xs = {k.n};
    xs.insert(xs.end(), k.in_sp.begin(), k.in_sp.end());
    xs.push_back(k.c);
    ws = k.k_sp;
    ws.push_back(k.c / k.groups);
    ws.push_back(k.o);
  }
  opt.window_strides = k.strides;
  opt.lhs_dilation = k.lhs_dil;
  opt.rhs_dilation = k.rhs_dil;
  opt.padding = k.pad;
  opt.window_reversal = k.rev;
  opt.feature_group_count = k.groups;
  return make_module({f32(xs), f32(ws)}, [&](Builder& b, auto a) {
    return std::vector<Value*>{b.tanh(b.convolution(a[0], a[1], opt))};
  });
}

TEST(ConvVjp, RandomAttributesMatchFiniteDifferences) {
  std::mt19937 g(21);
  int checked = 0;
  for (int trial = 0; checked < 14 && trial < 200; ++trial) {
    ConvCase k;
    size_t ns = static_cast<size_t>(rand_int(g, 1, 2));
    k.groups = rand_int(g, 1, 2);
    k.c = k.groups * rand_int(g, 1, 2);
    k.o = k.groups * rand_int(g, 1, 2);
    k.n = rand_int(g, 1, 2);
    k.nhwc = rand_int(g, 0, 1);
    for (size_t i = 0; i < ns; ++i) {
      k.in_sp.push_back(rand_int(g, 2, 5));
      k.k_sp.push_back(rand_int(g, 1, 3));
      k.strides.push_back(rand_int(g, 1, 2));
      k.lhs_dil.push_back(rand_int(g, 1, 2));
      k.rhs_dil.push_back(rand_int(g, 1, 2));
      k.pad.push_back({rand_int(g, -1, 2), rand_int(g, -1, 2)});
      k.rev.push_back(rand_int(g, 0, 3) == 0);
    }
    // Skip configurations with an empty output.
    bool empty = false;
    for (size_t i = 0; i < ns; ++i) {
      int64_t full = (k.in_sp[i] - 1) * k.lhs_dil[i] + 1 + k.pad[i].first + k.pad[i].second;
      empty = empty || full < (k.k_sp[i] - 1) * k.rhs_dil[i] + 1;
    }
    if (empty) continue;
    ++checked;
    SCOPED_TRACE("trial " + std::to_string(trial));
    auto m = conv_module(k);
    GradcheckOptions o;
    o.seed = static_cast<uint64_t>(trial);
    expect_grads(*m, o);
  }
  EXPECT_EQ(checked, 14);
}

TEST(ConvVjp, GradientsAlsoMatchOnTheCpuExecutor) {
  // The emitted backward convolutions (lhs-dilated, negative padding, batch groups) on `cpu`.
  std::vector<ConvCase> cases{
      {2,
       4,
       6,
       2,
       {6, 5},
       {3, 2},
       {2, 1},
       {1, 1},
       {1, 2},
       {{1, 0}, {-1, 1}},
       {false, false},
       false},
      {1, 3, 3, 3, {5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}, {false, false}, true},
      {2, 2, 3, 1, {7}, {3}, {3}, {2}, {1}, {{2, 1}}, {true}, false}};
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    auto m = conv_module(cases[i]);
    GradcheckOptions o;
    o.backend = "cpu";
    o.seed = i;
    expect_grads(*m, o);
  }
}

TEST(ConvVjp, BatchGroupedConvolutionAndSecondOrderOfGroupedConv) {
  // Differentiating the VJP of a grouped convolution differentiates its batch-grouped weight
  // gradient convolution.
  ConvCase k{
      2, 4, 4, 2, {4, 4}, {2, 2}, {1, 2}, {1, 1}, {1, 1}, {{0, 1}, {1, 0}}, {false, false}, false};
  auto m = conv_module(k);
  vjp(*m->find("main"), {0, 1});
  GradcheckOptions o;
  o.entry = "main_vjp";
  o.wrt = {0, 1, 2};
  expect_grads(*m, o);
}

TEST(ConvVjp, DepthwiseStaysGroupedAndGradsAreConvolutions) {
  ConvCase k{
      2, 3, 3, 3, {5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}, {false, false}, false};
  auto m = conv_module(k);
  expect_grads(*m);
  hlo::Func* gf = vjp(*m->find("main"), {0, 1});
  EXPECT_EQ(count_ops(*gf, OpKind::kDotGeneral), 0);
  int groups_fgc = 0, groups_bgc = 0, convs = 0;
  hlo::walk(*gf->body, [&](const hlo::Op& op) {
    if (op.kind != OpKind::kConvolution) return;
    ++convs;
    groups_fgc += op.attrs.get_int_or("feature_group_count", 1) == 3;
    groups_bgc += op.attrs.get_int_or("batch_group_count", 1) == 3;
  });
  EXPECT_EQ(convs, 3);       // forward, input grad, weight grad
  EXPECT_EQ(groups_fgc, 2);  // forward and input grad keep feature_group_count = 3
  EXPECT_EQ(groups_bgc, 1);  // weight grad groups over the batch
}

TEST(DotVjp, MlpWeightGradientsEqualTextbookFormulas) {
  // 3-layer MLP h1 = tanh(x W1), h2 = tanh(h1 W2), y = h2 W3, loss = sum(y ∘ t) (ybar = 1).
  // Textbook: dW3 = h2ᵀ t; dh2 = t W3ᵀ; dW2 = h1ᵀ (dh2 ∘ (1-h2²)); dW1 = xᵀ (dh1 ∘ (1-h1²)).
  auto m = make_module(
      {f64({4, 3}), f64({3, 5}), f64({5, 4}), f64({4, 2}), f64({4, 2})}, [&](Builder& b, auto a) {
        hlo::DotDims mm{{}, {}, {1}, {0}};
        Value* h1 = b.tanh(b.dot_general(a[0], a[1], mm));
        Value* h2 = b.tanh(b.dot_general(h1, a[2], mm));
        Value* y = b.dot_general(h2, a[3], mm);
        Value* l = b.reduce(b.multiply(y, a[4]), b.scalar(0, DType::kF64), {0, 1}, OpKind::kAdd);
        return std::vector<Value*>{l};
      });
  hlo::Func* gf = vjp(*m->find("main"), {1, 2, 3});
  auto exe = exec::make_backend("ref")->load(std::shared_ptr<const hlo::Module>(std::move(m)));
  std::mt19937 g(5);
  std::uniform_real_distribution<double> u(-1, 1);
  auto rnd = [&](Shape s) {
    std::vector<double> v(static_cast<size_t>(num_elements(s)));
    for (auto& e : v) e = u(g);
    return Tensor::from<double>(DType::kF64, s, v);
  };
  Tensor x = rnd({4, 3}), w1 = rnd({3, 5}), w2 = rnd({5, 4}), w3 = rnd({4, 2}), t = rnd({4, 2});
  auto out = exe->run(gf->name, {x, w1, w2, w3, t, Tensor::from<double>(DType::kF64, {}, {1.0})});
  // Host reference with plain loops.
  auto at = [](const Tensor& a, int64_t i, int64_t j) {
    return a.data<double>()[i * a.shape()[1] + j];
  };
  auto matmul = [&](const std::vector<double>& a, int64_t n, int64_t k, const Tensor& w,
                    int64_t mcols) {
    std::vector<double> r(static_cast<size_t>(n * mcols), 0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < mcols; ++j)
        for (int64_t p = 0; p < k; ++p)
          r[static_cast<size_t>(i * mcols + j)] += a[static_cast<size_t>(i * k + p)] * at(w, p, j);
    return r;
  };
  std::vector<double> xv(x.data<double>(), x.data<double>() + 12);
  std::vector<double> h1 = matmul(xv, 4, 3, w1, 5);
  for (auto& e : h1) e = std::tanh(e);
  std::vector<double> h2 = matmul(h1, 4, 5, w2, 4);
  for (auto& e : h2) e = std::tanh(e);
  // dW3 = h2ᵀ t
  for (int64_t p = 0; p < 4; ++p)
    for (int64_t j = 0; j < 2; ++j) {
      double s = 0;
      for (int64_t i = 0; i < 4; ++i) s += h2[static_cast<size_t>(i * 4 + p)] * at(t, i, j);
      EXPECT_NEAR(out[3].data<double>()[p * 2 + j], s, 1e-12);
    }
  // dz2 = (t W3ᵀ) ∘ (1 - h2²); dW2 = h1ᵀ dz2
  std::vector<double> dz2(16);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t p = 0; p < 4; ++p) {
      double s = 0;
      for (int64_t j = 0; j < 2; ++j) s += at(t, i, j) * at(w3, p, j);
      double h = h2[static_cast<size_t>(i * 4 + p)];
      dz2[static_cast<size_t>(i * 4 + p)] = s * (1 - h * h);
    }
  for (int64_t q = 0; q < 5; ++q)
    for (int64_t p = 0; p < 4; ++p) {
      double s = 0;
      for (int64_t i = 0; i < 4; ++i)
        s += h1[static_cast<size_t>(i * 5 + q)] * dz2[static_cast<size_t>(i * 4 + p)];
      EXPECT_NEAR(out[2].data<double>()[q * 4 + p], s, 1e-12);
    }
  // dz1 = (dz2 W2ᵀ) ∘ (1 - h1²); dW1 = xᵀ dz1
  std::vector<double> dz1(20);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t q = 0; q < 5; ++q) {
      double s = 0;
      for (int64_t p = 0; p < 4; ++p) s += dz2[static_cast<size_t>(i * 4 + p)] * at(w2, q, p);
      double h = h1[static_cast<size_t>(i * 5 + q)];
      dz1[static_cast<size_t>(i * 5 + q)] = s * (1 - h * h);
    }
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t q = 0; q < 5; ++q) {
      double s = 0;
      for (int64_t i = 0; i < 4; ++i) s += at(x, i, r) * dz1[static_cast<size_t>(i * 5 + q)];
      EXPECT_NEAR(out[1].data<double>()[r * 5 + q], s, 1e-12);
    }
  // The backward reuses the forward tanh values: exactly 2 tanh ops in the whole function.
  EXPECT_EQ(count_ops(*gf, OpKind::kTanh), 2);
}

}  // namespace
}  // namespace netspec::autodiff::testing
