// Transformer layer kinds (patchEmbed, transformerEncoder, tokenPositionEmbed, lmHead) and the
// tokenCE loss: tiny instances pass gradcheck of the train-step loss in f64 on ref and cpu
// (causal, keepSequence, RoPE, gather and one-hot embeddings, flashAttn); a tiny GPT's forward
// equals a loop-by-loop f64 reference written here; attention and tokenCE against hand values;
// the zoo's transformer nets emit every module and a cpu train step lowers the loss.
#include <cmath>
#include <numbers>

#include "emit_test_util.h"
#include "hlo/builder.h"
#include "layers/attention.h"
#include "layers/param_table.h"
#include "spec/zoo.h"

namespace netspec::emit::testing {
namespace {

EmitOptions opts(LossKind loss, int64_t batch = 2) {
  EmitOptions o;
  o.batch = batch;
  o.loss.kind = loss;
  return o;
}

// A ViT: 2x4x4 image, 2x2 patches (4 + 1 tokens), dim 4, 2 heads, class-token head.
NetSpec tiny_vit(bool flash = false) {
  return NetBuilder(flash ? "vit_flash" : "vit")
      .input(2, 4, 4)
      .add(PatchEmbed{2, 4, 2, 4})
      .add(TransformerEncoder{4, 2, 6, 1, false, false, flash, false})
      .add(Dense{4, 3})
      .build();
}

// The peer's ViT shape: no class token, mean-token head.
NetSpec tiny_mean_token_vit() {
  PatchEmbed pe{2, 4, 2, 4};
  pe.classToken = false;
  TransformerEncoder enc{4, 2, 6, 2};
  enc.meanToken = true;
  return NetBuilder("vit_mean").input(2, 4, 4).add(pe).add(enc).add(Dense{4, 3}).build();
}

// A GPT: token ids [3] -> embed (vocab 5, dModel 4) -> causal blocks -> lmHead [3, 5].
NetSpec tiny_gpt(const std::string& name, bool rope, bool gather, bool pos, bool causal = true,
                 int blocks = 1, bool flash = false) {
  return NetBuilder(name)
      .input(3)
      .add(TokenPositionEmbed{5, 3, 4, true, gather, pos})
      .add(TransformerEncoder{4, 2, 6, blocks, causal, true, flash, rope})
      .add(LmHead{4, 5, 3})
      .build();
}

std::vector<NetSpec> token_cases() {
  return {tiny_gpt("gpt_gather_pos", false, true, true),
          tiny_gpt("gpt_onehot_rope", true, false, false),
          tiny_gpt("gpt_rope_pos_2blocks", true, true, true, true, 2),
          tiny_gpt("gpt_bidirectional_rope", true, true, false, false),
          tiny_gpt("gpt_flash_rope", true, true, false, true, 1, true)};
}

TEST(EmitTransformer, VitPassesGradcheckOnRefAndCpu) {
  for (bool flash : {false, true}) {
    SCOPED_TRACE(flash ? "flash" : "dense");
    expect_loss_grads(tiny_vit(flash), opts(LossKind::classCE), "ref");
    expect_loss_grads(tiny_vit(flash), opts(LossKind::classCE), "cpu");
  }
  SCOPED_TRACE("mean token, no class token");
  NetSpec mean = tiny_mean_token_vit();
  EXPECT_EQ(build_param_table(mean).layers[0].out, (Shape{4, 4}));
  expect_loss_grads(mean, opts(LossKind::classCE), "ref");
  expect_loss_grads(mean, opts(LossKind::classCE), "cpu");
}

TEST(EmitTransformer, TokenModelsPassGradcheckOnRefAndCpu) {
  for (const NetSpec& net : token_cases()) {
    SCOPED_TRACE(net.name);
    // int_max = vocab: token ids and labels drawn from [0, 5).
    expect_loss_grads(net, opts(LossKind::tokenCE), "ref", 5);
    expect_loss_grads(net, opts(LossKind::tokenCE), "cpu", 5);
  }
}

// Ignored labels (-100) drop out of the loss and of its gradient.
TEST(EmitTransformer, TokenCeWithIgnoredLabelsPassesGradcheck) {
  NetSpec net = tiny_gpt("gpt_ignore", true, true, true);
  Emitted e = emit_module(net, ModuleKind::loss, opts(LossKind::tokenCE));
  size_t np = build_param_table(net).params.size();
  autodiff::GradcheckOptions g;
  g.int_max = 5;
  g.fixed_inputs[np + 1] = Tensor::from<int>(DType::kI32, {2, 3}, {1, -100, 4, -100, 0, 2});
  autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, g);
  EXPECT_TRUE(r.ok) << r.str();
}

// ---- values ----

// softmax(q·kᵀ/√dh)·v for one head, T = 2, dh = 1 (√dh = 1): q = (1, 2), k = (0, 1),
// v = (10, 20). Row i weights keys by e^{q_i k_j}: row 0 -> (10 + 20e)/(1 + e),
// row 1 -> (10 + 20e²)/(1 + e²); causal row 0 sees only key 0 -> 10.
TEST(EmitTransformer, DenseAttentionHandValues) {
  for (bool causal : {false, true}) {
    hlo::Module m;
    hlo::Type t = hlo::Type::tensor(DType::kF64, {1, 1, 2, 1});
    hlo::Func* f = m.add_func("main", {t, t, t});
    hlo::Builder b(f->body.get());
    b.func_return({layers::dense_attention(b, f->arg(0), f->arg(1), f->arg(2), causal)});
    auto in = [&](double a, double c) {
      return Tensor::from<double>(DType::kF64, t.shape(), {a, c});
    };
    Tensor y = run_main(m, {in(1, 2), in(0, 1), in(10, 20)})[0];
    const double e = std::numbers::e;
    EXPECT_NEAR(y.as_double(0), causal ? 10.0 : (10 + 20 * e) / (1 + e), 1e-12);
    EXPECT_NEAR(y.as_double(1), (10 + 20 * e * e) / (1 + e * e), 1e-12);
  }
}

// tokenCE on logits [1, 3, 2] with labels (0, -100, 1): mean of -log softmax over the two kept
// tokens; all labels ignored gives 0 (not 0/0).
TEST(EmitTransformer, TokenCeHandValues) {
  auto run = [](std::vector<int> labels) {
    hlo::Module m;
    hlo::Func* f = m.add_func("main", {hlo::Type::tensor(DType::kF64, {1, 3, 2}),
                                       hlo::Type::tensor(DType::kI32, {1, 3})});
    hlo::Builder b(f->body.get());
    losses::LossOptions o;
    o.kind = LossKind::tokenCE;
    b.func_return({losses::emit_loss(b, o, f->arg(0), f->arg(1))});
    Tensor z = Tensor::from<double>(DType::kF64, {1, 3, 2}, {1.0, 3.0, 5.0, -2.0, 0.5, 0.25});
    return run_main(m, {z, Tensor::from<int>(DType::kI32, {1, 3}, labels)})[0].as_double(0);
  };
  double l0 = std::log(std::exp(1.0) + std::exp(3.0)) - 1.0;    // token 0, class 0
  double l2 = std::log(std::exp(0.5) + std::exp(0.25)) - 0.25;  // token 2, class 1
  double l1 = std::log(std::exp(5.0) + std::exp(-2.0)) - 5.0;   // token 1, class 0
  EXPECT_NEAR(run({0, -100, 1}), (l0 + l2) / 2, 1e-12);
  EXPECT_NEAR(run({0, 0, 1}), (l0 + l1 + l2) / 3, 1e-12);
  EXPECT_NEAR(run({-100, -100, -100}), 0.0, 1e-15);
}

// Loop-by-loop f64 reference of a GPT (tokenPositionEmbed + transformerEncoder with
// keepSequence + lmHead), params in ParamTable order.
struct RefGpt {
  const std::vector<Tensor>& p;
  size_t at = 0;
  const Tensor& next() { return p[at++]; }
  using Mat = std::vector<std::vector<double>>;  // [T][features]

  static Mat linear(const Mat& x, const Tensor& w, const Tensor* bias) {
    int64_t out = w.shape()[0], in = w.shape()[1];
    Mat y(x.size(), std::vector<double>(out));
    for (size_t t = 0; t < x.size(); ++t)
      for (int64_t o = 0; o < out; ++o) {
        double s = bias ? bias->as_double(o) : 0;
        for (int64_t i = 0; i < in; ++i) s += x[t][i] * w.as_double(o * in + i);
        y[t][o] = s;
      }
    return y;
  }
  Mat lin(const Mat& x) {
    const Tensor& w = next();
    return linear(x, w, &next());
  }
  Mat ln(Mat x, double eps) {
    const Tensor& g = next();
    const Tensor& bt = next();
    for (auto& r : x) {
      double mu = 0, var = 0;
      for (double v : r) mu += v / r.size();
      for (double v : r) var += (v - mu) * (v - mu) / r.size();
      for (size_t i = 0; i < r.size(); ++i)
        r[i] = (r[i] - mu) / std::sqrt(var + eps) * g.as_double(i) + bt.as_double(i);
    }
    return x;
  }
  // One sequence: ids [T] -> logits [T][V].
  Mat run(const std::vector<int>& ids, const TransformerEncoder& l, bool pos, double eps) {
    at = 0;
    const Tensor& emb = next();
    int64_t d = emb.shape()[1], t = ids.size(), h = l.heads, dh = d / h;
    Mat x(t, std::vector<double>(d));
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < d; ++j) x[i][j] = emb.as_double(ids[i] * d + j);
    if (pos) {
      const Tensor& pe = next();
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < d; ++j) x[i][j] += pe.as_double(i * d + j);
    }
    for (int blk = 0; blk < l.nBlocks; ++blk) {
      Mat qkv = lin(ln(x, eps));
      // q, k of head hh at position i, element j; RoPE rotates (j, j + dh/2) by i·10000^(-2j/dh).
      auto get = [&](int s, int64_t hh, int64_t i, int64_t j) {
        auto raw = [&](int64_t jj) { return qkv[i][s * d + hh * dh + jj]; };
        if (!l.rope || s == 2) return raw(j);
        int64_t half = dh / 2, jm = j % half;
        double th = i * std::pow(10000.0, -2.0 * jm / dh);
        return j < half ? raw(j) * std::cos(th) - raw(j + half) * std::sin(th)
                        : raw(j) * std::cos(th) + raw(j - half) * std::sin(th);
      };
      Mat att(t, std::vector<double>(d));
      for (int64_t hh = 0; hh < h; ++hh)
        for (int64_t i = 0; i < t; ++i) {
          std::vector<double> s(t);
          double mx = -1e300, z = 0;
          int64_t last = l.causalMask ? i : t - 1;
          for (int64_t j = 0; j <= last; ++j) {
            s[j] = 0;
            for (int64_t c = 0; c < dh; ++c) s[j] += get(0, hh, i, c) * get(1, hh, j, c);
            s[j] /= std::sqrt(double(dh));
            mx = std::max(mx, s[j]);
          }
          for (int64_t j = 0; j <= last; ++j) z += s[j] = std::exp(s[j] - mx);
          for (int64_t c = 0; c < dh; ++c) {
            double o = 0;
            for (int64_t j = 0; j <= last; ++j) o += s[j] / z * get(2, hh, j, c);
            att[i][hh * dh + c] = o;
          }
        }
      Mat a = lin(att);
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < d; ++j) x[i][j] += a[i][j];
      Mat m = lin(ln(x, eps));
      for (auto& r : m)
        for (double& v : r) v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      m = lin(m);
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < d; ++j) x[i][j] += m[i][j];
    }
    x = ln(x, eps);
    return linear(x, next(), nullptr);
  }
};

TEST(EmitTransformer, GptForwardEqualsLoopReference) {
  struct C {
    bool rope, causal, pos, gather;
  };
  for (C cs : {C{false, true, true, true}, C{true, true, false, true}, C{true, false, true, false},
               C{true, true, true, false}}) {
    SCOPED_TRACE(
        fmt::format("rope {} causal {} pos {} gather {}", cs.rope, cs.causal, cs.pos, cs.gather));
    NetSpec net = NetBuilder("gpt")
                      .input(4)
                      .add(TokenPositionEmbed{7, 4, 8, true, cs.gather, cs.pos})
                      .add(TransformerEncoder{8, 2, 12, 2, cs.causal, true, false, cs.rope})
                      .add(LmHead{8, 7, 4})
                      .build();
    ParamTable t = build_param_table(net);
    EmitOptions o;
    o.batch = 2;
    o.dtype = DType::kF64;
    Emitted e = emit_module(net, ModuleKind::eval, o);
    ASSERT_EQ(e.manifest.inputs.back().dtype, DType::kI32);
    ASSERT_EQ(e.manifest.inputs.back().shape, (Shape{2, 4}));
    std::vector<Tensor> in = small_params(t, DType::kF64, 0.5, 7);
    std::vector<int> ids = {3, 0, 6, 3, 1, 1, 5, 2};
    in.push_back(Tensor::from<int>(DType::kI32, {2, 4}, ids));
    for (const char* backend : {"ref", "cpu"}) {
      Tensor y = run_main(*e.module, in, backend)[0];
      ASSERT_EQ(y.shape(), (Shape{2, 4, 7}));
      RefGpt ref{in};
      double worst = 0;
      for (int b = 0; b < 2; ++b) {
        auto want = ref.run({ids.begin() + 4 * b, ids.begin() + 4 * b + 4},
                            std::get<TransformerEncoder>(net.layers[1]), cs.pos, net.lnEps);
        for (int i = 0; i < 4; ++i)
          for (int v = 0; v < 7; ++v)
            worst = std::max(worst, std::abs(y.as_double((b * 4 + i) * 7 + v) - want[i][v]));
      }
      // erf is a rational approximation (|error| < 2e-7): the only source of difference.
      EXPECT_LT(worst, 1e-5) << backend;
    }
  }
}

// A class-token ViT returns token 0; keepSequence returns all n + 1 tokens.
TEST(EmitTransformer, VitShapesAndManifest) {
  NetSpec net = tiny_vit();
  Emitted e = emit_module(net, ModuleKind::forward, opts(LossKind::classCE));
  EXPECT_EQ(e.manifest.outputs[0].shape, (Shape{2, 3}));
  EXPECT_EQ(e.manifest.inputs.back().dtype, DType::kF32);
  NetSpec seq = NetBuilder("vit_seq")
                    .input(2, 4, 4)
                    .add(PatchEmbed{2, 4, 2, 4})
                    .add(TransformerEncoder{4, 2, 6, 1, false, true})
                    .build();
  EXPECT_EQ(
      emit_module(seq, ModuleKind::forward, opts(LossKind::classCE)).manifest.outputs[0].shape,
      (Shape{2, 5, 4}));
  // Token model: the train step takes i32 ids [B, T] and i32 labels [B, T]; the vjp module has
  // no d.x for integer ids.
  NetSpec gpt = tiny_gpt("gpt", true, true, false);
  Emitted ts = emit_module(gpt, ModuleKind::train_step, opts(LossKind::tokenCE));
  std::map<std::string, TensorInfo> by_name;
  for (const auto& i : ts.manifest.inputs) by_name[i.name] = i;
  EXPECT_EQ(by_name["x"].dtype, DType::kI32);
  EXPECT_EQ(by_name["x"].shape, (Shape{2, 3}));
  EXPECT_EQ(by_name["labels"].dtype, DType::kI32);
  EXPECT_EQ(by_name["labels"].shape, (Shape{2, 3}));
  Emitted vj = emit_module(gpt, ModuleKind::vjp, opts(LossKind::tokenCE));
  for (const auto& out : vj.manifest.outputs) EXPECT_NE(out.name, "d.x");
}

TEST(EmitTransformer, TokenCeRefusesClassLogits) {
  NetSpec net = tiny_vit();
  try {
    emit_module(net, ModuleKind::loss, opts(LossKind::tokenCE));
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenCE expects per-token logits [B, T, V]"),
              std::string::npos)
        << e.what();
  }
}

// ---- zoo ----

std::vector<std::string> zoo_transformers() {
  return {"vit-tiny", "tiny-gpt", "tiny-gpt-rope", "vit-cifar-tiny"};
}

TEST(EmitTransformer, ZooNetsEmitEveryModule) {
  for (const std::string& name : zoo_transformers()) {
    SpecFile sf = resolve_net(name);
    EmitOptions o = EmitOptions::from_train(sf.train.value_or(TrainConfig{}), 2);
    for (ModuleKind k : {ModuleKind::forward, ModuleKind::eval, ModuleKind::loss,
                         ModuleKind::train_step, ModuleKind::vjp, ModuleKind::optimizer}) {
      SCOPED_TRACE(name + " " + std::string(enum_name(k)));
      Emitted e = emit_module(sf.net, k, o);
      EXPECT_FALSE(e.manifest.inputs.empty());
    }
  }
}

TEST(EmitTransformer, ZooTrainStepLowersLossOnCpu) { expect_train_steps_lower_loss("tiny-gpt", 2); }

}  // namespace
}  // namespace netspec::emit::testing
