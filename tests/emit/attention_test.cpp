// Attention: a hand-computed dense value; flash == dense (forward and dQ, dK, dV) in f32 across
// sequence lengths, blocks, heads and causal on/off, on ref and cpu; flash's custom backward and
// RoPE pass gradcheck in f64; RoPE and its VJP (rotation by -θ) against the host formula; the
// flash module holds no [T, T] value.
#include "layers/attention.h"

#include <cmath>
#include <cstdlib>

#include "emit/probes.h"
#include "emit_test_util.h"
#include "exec/cpu/cpu_backend.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"

namespace netspec::emit::testing {
namespace {

struct Cfg {
  int64_t b, h, t, dh;
  bool causal;
  int64_t block;  // 0 = flash_block(t)
};

AttentionProbe probe(const std::string& kind, const Cfg& c, DType dt = DType::kF32) {
  AttentionProbe p;
  p.probe = kind;
  p.batch = c.b;
  p.heads = c.h;
  p.seq = c.t;
  p.head_dim = c.dh;
  p.causal = c.causal;
  p.block = c.block;
  p.dtype = dt;
  return p;
}

std::vector<Tensor> inputs_for(const Emitted& e, uint64_t seed) {
  std::vector<Tensor> in;
  for (size_t i = 0; i < e.manifest.inputs.size(); ++i) {
    const auto& ti = e.manifest.inputs[i];
    in.push_back(random_tensor(hlo::Type::tensor(ti.dtype, ti.shape), seed + i));
  }
  return in;
}

double max_abs(const Tensor& a) {
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(a.as_double(i)));
  return m;
}

// max |a - ref| / max |ref|
double rel_err(const Tensor& a, const Tensor& ref) { return max_abs_diff(a, ref) / max_abs(ref); }

TEST(Attention, DenseHandComputed) {
  // T = 2, dh = 1: q = (1, 0), k = (1, 2), v = (10, 20). Row 0 scores (1, 2): softmax =
  // (0.26894142, 0.73105858) -> 17.3105858; row 1 scores (0, 0) -> 15. Causal: row 0 sees key 0
  // only -> 10.
  for (bool causal : {false, true}) {
    Emitted e = emit_attention_probe(probe("dense", {1, 1, 2, 1, causal, 0}));
    std::vector<Tensor> in = {Tensor::from<float>(DType::kF32, {1, 1, 2, 1}, {1, 0}),
                              Tensor::from<float>(DType::kF32, {1, 1, 2, 1}, {1, 2}),
                              Tensor::from<float>(DType::kF32, {1, 1, 2, 1}, {10, 20})};
    for (const char* be : {"ref", "cpu"}) {
      Tensor o = run_main(*e.module, in, be)[0];
      EXPECT_NEAR(o.as_double(0), causal ? 10.0 : 17.3105858, 1e-5) << be;
      EXPECT_NEAR(o.as_double(1), 15.0, 1e-5) << be;
    }
  }
}

TEST(Attention, FlashBlockIsLargestDivisorUpTo256) {
  EXPECT_EQ(layers::flash_block(5), 5);
  EXPECT_EQ(layers::flash_block(128), 128);
  EXPECT_EQ(layers::flash_block(200), 200);
  EXPECT_EQ(layers::flash_block(256), 256);
  EXPECT_EQ(layers::flash_block(300), 150);
  EXPECT_EQ(layers::flash_block(4096), 256);
  EXPECT_EQ(layers::flash_block(263), 1);  // prime: one key per block
}

// Flash equals dense to <= 1e-5 relative in f32: forward (o) and dq, dk, dv.
TEST(Attention, FlashEqualsDenseForwardAndGradients) {
  std::vector<Cfg> cfgs = {
      {1, 1, 5, 4, false, 0},                              // T < block: a single block
      {1, 1, 5, 4, true, 0},    {2, 3, 40, 8, false, 8},   // 5 key blocks
      {2, 3, 40, 8, true, 8},   {1, 2, 200, 16, true, 0},  // T not a multiple of 128: block 100
      {1, 2, 130, 8, false, 0},                            // block 65
      {1, 1, 48, 6, true, 16},
  };
  for (const Cfg& c : cfgs) {
    std::string what =
        fmt::format("B{} H{} T{} dh{} causal {} block {}", c.b, c.h, c.t, c.dh, c.causal, c.block);
    Emitted fl = emit_attention_probe(probe("flash-grad", c));
    Emitted de = emit_attention_probe(probe("dense-grad", c));
    std::vector<Tensor> in = inputs_for(fl, 7 * uint64_t(c.t) + c.h);
    std::vector<Tensor> rf = run_main(*fl.module, in, "ref");
    std::vector<Tensor> rd = run_main(*de.module, in, "ref");
    ASSERT_EQ(rf.size(), 4u);
    const char* names[] = {"o", "dq", "dk", "dv"};
    for (size_t i = 0; i < 4; ++i) {
      double e = rel_err(rf[i], rd[i]);
      if (std::getenv("NETSPEC_PRINT_ERR"))
        std::printf("%s %s rel %.3g\n", what.c_str(), names[i], e);
      EXPECT_LE(e, 1e-5) << what << " " << names[i];
      EXPECT_GT(max_abs(rd[i]), 1e-3) << what << " " << names[i];  // a real, nonzero value
    }
  }
}

// The while loops run on the cpu executor's fast kernels (bodies planned as sub-plans, no ref
// step anywhere) with results equal to ref's, also under NETSPEC_CPU_CHECK=1.
TEST(Attention, FlashOnCpuEqualsRef) {
  Cfg c{2, 2, 64, 8, true, 16};
  Emitted fl = emit_attention_probe(probe("flash-grad", c));
  exec::cpu::PlanStats st = exec::cpu::plan_stats(*fl.module->entry("main"));
  EXPECT_EQ(st.ref_steps, 0) << st.fallback_ops;
  std::vector<Tensor> in = inputs_for(fl, 3);
  std::vector<Tensor> r = run_main(*fl.module, in, "ref");
  for (bool check : {false, true}) {
    if (check) ::setenv("NETSPEC_CPU_CHECK", "1", 1);
    std::vector<Tensor> p = run_main(*fl.module, in, "cpu");
    ::unsetenv("NETSPEC_CPU_CHECK");
    for (size_t i = 0; i < r.size(); ++i) EXPECT_LE(rel_err(p[i], r[i]), 1e-5) << i;
  }
}

TEST(Attention, FlashBackwardGradcheckF64) {
  for (bool causal : {false, true}) {
    Emitted e = emit_attention_probe(probe("flash", {1, 2, 12, 4, causal, 4}, DType::kF64));
    autodiff::GradcheckOptions g;
    autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, g);
    EXPECT_EQ(r.inputs.size(), 3u);
    EXPECT_TRUE(r.ok) << "causal " << causal << "\n" << r.str();
    if (std::getenv("NETSPEC_PRINT_ERR")) std::printf("%s", r.str().c_str());
  }
}

// The custom VJP also carries the logsumexp output's cotangent (∂L/∂s = p).
TEST(Attention, FlashLogsumexpOutputGradcheckF64) {
  hlo::Module m;
  hlo::Type t = hlo::Type::tensor(DType::kF64, {1, 2, 8, 4});
  hlo::Func* f = m.add_func("main", {t, t, t});
  hlo::Builder b(f->body.get());
  b.func_return(layers::flash_attention_lse(b, f->arg(0), f->arg(1), f->arg(2), true, 4));
  autodiff::GradcheckReport r = autodiff::gradcheck(m, {});
  EXPECT_EQ(r.inputs.size(), 3u);
  EXPECT_TRUE(r.ok) << r.str();
}

// Printed, parsed back and with its per-name registration removed, the flash module still
// finds its backward through the registered prefix (flash_attention_b<block>[_causal]).
TEST(Attention, FlashBackwardFoundAfterPrintAndParse) {
  Emitted e = emit_attention_probe(probe("flash", {1, 2, 8, 4, true, 4}, DType::kF64));
  std::unique_ptr<hlo::Module> m = hlo::parse_module(hlo::print_module(*e.module));
  std::string callee;
  for (const auto& f : m->funcs)
    if (!f->is_public) callee = f->name;
  EXPECT_EQ(callee, "flash_attention_b4_causal__1x2x8x4f64");
  EXPECT_TRUE(autodiff::unregister_custom_vjp(callee));
  autodiff::GradcheckReport r = autodiff::gradcheck(*m, {});
  EXPECT_EQ(r.inputs.size(), 3u);
  EXPECT_TRUE(r.ok) << r.str();
}

TEST(Attention, RopeGradcheckF64) {
  Emitted e = emit_attention_probe(probe("rope", {2, 2, 6, 8, false, 0}, DType::kF64));
  autodiff::GradcheckReport r = autodiff::gradcheck(*e.module, {});
  EXPECT_TRUE(r.ok) << r.str();
}

// y = R(θ)x per pair (i, i + dh/2), θ = t·10000^(-2i/dh); the VJP is dx = R(-θ)dy.
TEST(Attention, RopeAndItsVjpAgainstHostRotation) {
  Cfg c{1, 2, 7, 6, false, 0};
  Emitted e = emit_attention_probe(probe("rope-grad", c, DType::kF64));
  std::vector<Tensor> in = inputs_for(e, 11);
  std::vector<Tensor> out = run_main(*e.module, in, "ref");
  const Tensor &x = in[0], &dy = in[1], &y = out[0], &dx = out[1];
  int64_t half = c.dh / 2;
  for (int64_t h = 0; h < c.h; ++h)
    for (int64_t t = 0; t < c.t; ++t)
      for (int64_t i = 0; i < half; ++i) {
        double th = double(t) * std::pow(10000.0, -2.0 * double(i) / double(c.dh));
        int64_t a = (h * c.t + t) * c.dh + i, bb = a + half;
        double co = std::cos(th), si = std::sin(th);
        EXPECT_NEAR(y.as_double(a), x.as_double(a) * co - x.as_double(bb) * si, 1e-12);
        EXPECT_NEAR(y.as_double(bb), x.as_double(bb) * co + x.as_double(a) * si, 1e-12);
        EXPECT_NEAR(dx.as_double(a), dy.as_double(a) * co + dy.as_double(bb) * si, 1e-12);
        EXPECT_NEAR(dx.as_double(bb), dy.as_double(bb) * co - dy.as_double(a) * si, 1e-12);
      }
}

// Whether some value (loop bodies included) ends in [rows, cols].
bool has_trailing(const hlo::Block& blk, int64_t rows, int64_t cols) {
  for (const auto& op : blk.ops) {
    for (size_t i = 0; i < op->results.size(); ++i) {
      const hlo::Type& ty = op->result(i)->type;
      if (ty.is_tensor() && ty.rank() >= 2 && ty.dim(ty.rank() - 1) == cols &&
          ty.dim(ty.rank() - 2) == rows)
        return true;
    }
    for (const auto& r : op->regions)
      if (has_trailing(*r, rows, cols)) return true;
  }
  return false;
}
bool has_trailing(const hlo::Module& m, int64_t rows, int64_t cols) {
  for (const auto& f : m.funcs)
    if (has_trailing(*f->body, rows, cols)) return true;
  return false;
}
// No value of the flash module (forward or backward, loop bodies included) is T x T.
bool has_square(const hlo::Block& blk, int64_t t) { return has_trailing(blk, t, t); }

// Causal flash tiles queries too: its scores are [blk, blk] tiles (only those on or below the
// diagonal are visited), never the [T, blk] strips the non-causal sweep computes.
TEST(Attention, CausalFlashScoresAreSquareTiles) {
  for (bool causal : {false, true}) {
    Emitted fl = emit_attention_probe(probe("flash-grad", {1, 2, 256, 8, causal, 32}));
    EXPECT_EQ(has_trailing(*fl.module, 256, 32), !causal) << causal;
    EXPECT_EQ(has_trailing(*fl.module, 32, 32), causal) << causal;
  }
}

TEST(Attention, FlashMaterialisesNoScoreMatrix) {
  Cfg c{1, 2, 512, 8, true, 0};  // the default block: 256
  Emitted fl = emit_attention_probe(probe("flash-grad", c));
  Emitted de = emit_attention_probe(probe("dense-grad", c));
  bool fl_sq = false, de_sq = false;
  for (const auto& f : fl.module->funcs) fl_sq = fl_sq || has_square(*f->body, 512);
  for (const auto& f : de.module->funcs) de_sq = de_sq || has_square(*f->body, 512);
  EXPECT_FALSE(fl_sq);
  EXPECT_TRUE(de_sq);  // the check itself can see a score matrix
}

TEST(Attention, ProbeRefusesBadInput) {
  EXPECT_THROW(emit_attention_probe(probe("sparse", {1, 1, 4, 4, false, 0})), Error);
  EXPECT_THROW(emit_attention_probe(probe("flash", {1, 1, 12, 4, false, 5})), Error);  // 5∤12
  EXPECT_THROW(emit_attention_probe(probe("rope", {1, 1, 4, 3, false, 0})), Error);    // odd dh
}

}  // namespace
}  // namespace netspec::emit::testing
