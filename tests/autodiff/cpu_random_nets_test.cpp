// Random small convolutional nets and their gradients on the cpu executor against the ref
// interpreter. Each seed builds a forward function over an image batch [2, C, H, W] and conv
// weights (convolutions 1x1 / 3x3, strided, grouped and depthwise (also 5x5, 7x7); batch-norm-like
// normalisation over [0, 2, 3] with per-channel scale; swish; residual adds; max and average
// pooling; a global pool and a linear head), then its VJP with autodiff::vjp: the backward
// convolutions (dilated inputs, weight gradients), select_and_scatter and the broadcast sums the
// train steps run, on the planner's blocked layouts, Winograd and fused groups. A second net per
// seed is an inference forward with eval BatchNorm + ReLU after its convolutions (folded into
// their post-ops), run once and as a session that keeps the weights (and whatever the executor
// derives from them) over three steps, the last after one weight is set anew. The outputs (forward
// results and every input's gradient) must match ref's: f32 to 1e-3 of each result's largest
// magnitude (Winograd's and oneDNN's own summation orders), f64 to 1e-10; a planner mistake (a
// buffer shared too early, a wrong layout) is off by O(1). Max pooling's ties are left to chance: a
// seed whose inputs tie within rounding would fail on every run, not now and then.
#include <cmath>
#include <cstdlib>
#include <random>
#include <set>

#include "autodiff/vjp.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/kernels.h"
#include "hlo/text/printer.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::ConvOptions;
using hlo::DotDims;
using hlo::Func;
using hlo::I64s;
using hlo::Module;
using hlo::OpKind;
using hlo::WindowOptions;

class NetGen {
 public:
  // `winograd_first`: the first layer is a 3x3 stride-1 convolution from 8+ to 16+ channels
  // (one the own Winograd kernels take).
  // `eval`: an inference forward (@main only) whose layers may also be eval BatchNorm + ReLU,
  // x · s[c] + t[c] then max(·, 0), the form the planner folds into a convolution's post-ops
  // (ReLU's kink stays out of the gradients, where rounding could flip a derivative).
  NetGen(uint32_t seed, DType dt, bool winograd_first = false, bool eval = false)
      : rng_(seed), dt_(dt), winograd_first_(winograd_first), eval_(eval) {}

  // @main(x, w...) -> (logits, features) and, unless eval, @main_vjp; returns the module and
  // the argument types.
  std::shared_ptr<Module> build(std::vector<Type>& args) {
    const int64_t c0 = winograd_first_ ? std::vector<int64_t>{8, 16, 32}[pick(3)]
                                       : std::vector<int64_t>{3, 8, 16, 32}[pick(4)];
    const int64_t hw = std::vector<int64_t>{8, 9, 12, 16, 16}[pick(5)];
    // The ops and their weights' shapes are chosen first (the weights are @main's arguments).
    struct Layer {
      int kind;  // 0 conv, 1 norm, 2 swish, 3 residual, 4 max pool, 5 avg pool, 6 eval BN + ReLU
      int64_t k = 1, stride = 1, cout = 0, groups = 1;
    };
    std::vector<Layer> layers;
    Shape s = {2, c0, hw, hw};
    std::vector<Type> wts;
    const int n = 3 + static_cast<int>(pick(6));
    for (int i = 0; i < n; ++i) {
      Layer l;
      l.kind = static_cast<int>(pick(eval_ ? 7 : 6));
      if (eval_ && i > 0 && layers.back().kind == 0 && pick(2) == 0) l.kind = 6;
      if ((l.kind == 4 || l.kind == 5) && s[2] < 4) l.kind = 2;
      if (i == 0 && winograd_first_) {
        l.kind = 0, l.k = 3, l.cout = std::vector<int64_t>{16, 32, 48}[pick(3)];
        wts.push_back(Type::tensor(dt_, {l.cout, s[1], 3, 3}));
        s = {2, l.cout, s[2], s[3]};
      } else if (l.kind == 0) {
        l.k = pick(2) ? 3 : 1;
        l.stride = s[2] >= 8 && pick(3) == 0 ? 2 : 1;
        const size_t g = pick(4);
        if (g == 0 && s[1] % 2 == 0) {  // depthwise, 5x5 and 7x7 too (own gradient kernel)
          l.groups = s[1], l.cout = s[1];
          if (pick(2) == 0) l.k = pick(2) ? 5 : 7;
        } else if (g == 1 && s[1] % 4 == 0) {  // 4 groups
          l.groups = 4, l.cout = 4 * static_cast<int64_t>(1 + pick(6));
        } else {
          l.cout = std::vector<int64_t>{8, 16, 24, 32, 48}[pick(5)];
        }
        wts.push_back(Type::tensor(dt_, {l.cout, s[1] / l.groups, l.k, l.k}));
        s = {2, l.cout, (s[2] + l.stride - 1) / l.stride, (s[3] + l.stride - 1) / l.stride};
      } else if (l.kind == 1) {
        wts.push_back(Type::tensor(dt_, {s[1]}));
      } else if (l.kind == 6) {
        wts.push_back(Type::tensor(dt_, {s[1]}));
        wts.push_back(Type::tensor(dt_, {s[1]}));
      } else if (l.kind == 4 || l.kind == 5) {
        s = {2, s[1], s[2] / 2, s[3] / 2};
      }
      layers.push_back(l);
    }
    const int64_t classes = 5;
    wts.push_back(Type::tensor(dt_, {s[1], classes}));
    args = {Type::tensor(dt_, {2, c0, hw, hw})};
    args.insert(args.end(), wts.begin(), wts.end());

    auto m = std::make_shared<Module>();
    Func* f = m->add_func("main", args);
    Builder b(f->body.get());
    Value* x = f->arg(0);
    size_t w = 1;
    std::vector<Value*> earlier;  // residual candidates
    for (const Layer& l : layers) {
      switch (l.kind) {
        case 0:
          x = conv(b, x, f->arg(w++), l.k, l.stride, l.groups);
          break;
        case 1:
          x = norm(b, x, f->arg(w++));
          break;
        case 2:
          x = b.multiply(x, b.logistic(x));
          break;
        case 6: {
          const Shape& xs = x->type.shape();
          Value* sc = b.broadcast_in_dim(f->arg(w++), xs, {1});
          Value* sh = b.broadcast_in_dim(f->arg(w++), xs, {1});
          x = b.maximum(b.add(b.multiply(x, sc), sh), splat(b, 0, xs));
          break;
        }
        case 3: {
          Value* same = nullptr;
          for (Value* e : earlier)
            if (e->type == x->type && e != x) same = e;
          x = same ? b.add(x, same) : b.tanh(x);
          break;
        }
        default:
          x = pool(b, x, l.kind == 4);
          break;
      }
      earlier.push_back(x);
    }
    // Global average pool and the head: [2, C] · [C, 5].
    const Shape& xs = x->type.shape();
    Value* g = b.reduce(x, b.scalar(0, dt_), {2, 3}, OpKind::kAdd);
    g = b.multiply(g, splat(b, 1.0 / static_cast<double>(xs[2] * xs[3]), g->type.shape()));
    DotDims dd;
    dd.lhs_contracting = {1}, dd.rhs_contracting = {0};
    Value* logits = b.dot_general(g, f->arg(w), dd);
    b.func_return({logits, x});
    if (eval_) return m;
    std::vector<size_t> wrt;
    for (size_t i = 0; i < args.size(); ++i) wrt.push_back(i);
    autodiff::vjp(*f, wrt);
    return m;
  }

  std::vector<Tensor> inputs(const Func& vjp_fn, uint32_t seed) const {
    std::vector<Tensor> in;
    for (size_t i = 0; i < vjp_fn.num_args(); ++i) {
      const Type& t = vjp_fn.arg(i)->type;
      // Weights scaled by 1/√fan-in so activations stay O(1).
      const Shape& s = t.shape();
      double scale = 1;
      if (s.size() == 4 && i > 0) scale = 1.0 / std::sqrt(static_cast<double>(s[1] * s[2] * s[3]));
      Tensor r = random_f32(s, seed + static_cast<uint32_t>(i), -2 * scale, 2 * scale);
      if (dt_ == DType::kF64) {
        std::vector<double> v(static_cast<size_t>(r.numel()));
        for (size_t j = 0; j < v.size(); ++j) v[j] = r.as_double(static_cast<int64_t>(j));
        r = Tensor::from<double>(DType::kF64, s, v);
      }
      in.push_back(r);
    }
    return in;
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  Value* splat(Builder& b, double v, const Shape& s) {
    return b.broadcast_in_dim(b.scalar(v, dt_), s, {});
  }
  Value* conv(Builder& b, Value* x, Value* w, int64_t k, int64_t stride, int64_t groups) {
    ConvOptions o;
    o.dims = ConvOptions::nchw(2);
    o.window_strides = {stride, stride};
    const int64_t h = x->type.dim(2);
    // "SAME" padding: output ⌈h / stride⌉.
    const int64_t out = (h + stride - 1) / stride,
                  total = std::max<int64_t>(0, (out - 1) * stride + k - h);
    o.padding = {{total / 2, total - total / 2}, {total / 2, total - total / 2}};
    o.feature_group_count = groups;
    return b.convolution(x, w, o);
  }
  // (x - mean) / sqrt(var + 1e-3) · (1 + tanh(scale)) over [0, 2, 3] per channel.
  Value* norm(Builder& b, Value* x, Value* scale) {
    const Shape& s = x->type.shape();
    const double n = static_cast<double>(s[0] * s[2] * s[3]);
    Value* mean =
        b.multiply(b.reduce(x, b.scalar(0, dt_), {0, 2, 3}, OpKind::kAdd), splat(b, 1 / n, {s[1]}));
    Value* d = b.subtract(x, b.broadcast_in_dim(mean, s, {1}));
    Value* var = b.multiply(b.reduce(b.multiply(d, d), b.scalar(0, dt_), {0, 2, 3}, OpKind::kAdd),
                            splat(b, 1 / n, {s[1]}));
    Value* inv = b.rsqrt(b.add(var, splat(b, 1e-3, {s[1]})));
    Value* g = b.multiply(inv, b.add(splat(b, 1, {s[1]}), b.tanh(scale)));
    return b.multiply(d, b.broadcast_in_dim(g, s, {1}));
  }
  Value* pool(Builder& b, Value* x, bool max) {
    WindowOptions w;
    w.window_dimensions = {1, 1, 2, 2};
    w.window_strides = {1, 1, 2, 2};
    if (max) return b.reduce_window(x, b.scalar(-1e30, dt_), w, OpKind::kMaximum);
    Value* sum = b.reduce_window(x, b.scalar(0, dt_), w, OpKind::kAdd);
    return b.multiply(sum, splat(b, 0.25, sum->type.shape()));
  }

  std::mt19937 rng_;
  DType dt_;
  bool winograd_first_, eval_;
};

// f64 to 1e-10, f32 to 1e-3 of each result's largest magnitude (Winograd's and oneDNN's sums).
void expect_close(const std::vector<Tensor>& got, const std::vector<Tensor>& want, DType dt,
                  const std::string& what) {
  expect_close_to_scale(got, want, dt == DType::kF64 ? 1e-10 : 1e-3, what);
}

const int kSeeds = [] {
  const char* e = std::getenv("NETSPEC_RANDOM_NETS");
  return e && std::atoi(e) > 0 ? std::atoi(e) : 16;
}();

class CpuRandomNets : public ::testing::TestWithParam<int> {};

// Seeds kSeeds·p + 1 .. kSeeds·(p + 1) per parameter p; NETSPEC_RANDOM_NETS=N runs N each
// (1200 seeds passed by hand, also with ONEDNN_MAX_CPU_ISA=AVX2, NETSPEC_THREADS=1,
// NETSPEC_FUSION_JIT=0 and NETSPEC_CPU_WINOGRAD=own).
TEST_P(CpuRandomNets, GradientsMatchRef) {
  // Odd parameters plan their 3x3 convolutions on netspec's own Winograd kernels wherever they
  // apply (from 8 input and 16 output channels), not only where the shape rule picks them, and
  // every other net of theirs starts with such a convolution.
  struct Winograd {
    explicit Winograd(bool own) {
      if (own) ::setenv("NETSPEC_CPU_WINOGRAD", "own", 1);
    }
    ~Winograd() { ::unsetenv("NETSPEC_CPU_WINOGRAD"); }
  } winograd(GetParam() % 2 == 1);
  exec::cpu::PlanStats covered, covered_eval;
  std::set<std::string> fallbacks;
  for (int k = 1; k <= kSeeds && !HasFailure(); ++k)
    for (DType dt : {DType::kF32, DType::kF64})
      for (bool eval : {false, true}) {
        const uint32_t seed = static_cast<uint32_t>(kSeeds * GetParam() + k);
        NetGen gen(seed, dt, GetParam() % 2 == 1 && k % 2 == 1, eval);
        std::vector<Type> args;
        std::shared_ptr<Module> m = gen.build(args);
        const char* entry = eval ? "main" : "main_vjp";
        const Func* g = m->find(entry);
        ASSERT_NE(g, nullptr);
        const std::vector<Tensor> in = gen.inputs(*g, seed * 13);
        if (dt == DType::kF32) {
          const exec::cpu::PlanStats st = exec::cpu::plan_stats(*g);
          (eval ? covered_eval : covered).add(st);
          if (!st.fallback_ops.empty()) fallbacks.insert(st.fallback_ops);
        }
        const std::vector<Tensor> want = exec::make_backend("ref")->load(m)->run(entry, in);
        const std::vector<Tensor> got = exec::make_backend("cpu")->load(m)->run(entry, in);
        const std::string what =
            "seed " + std::to_string(seed) + " " + std::string(dtype_name(dt)) + " " + entry;
        expect_close(got, want, dt, what);
        if (eval && !HasFailure()) {
          // As an inference session: the weights kept (the executor may keep forms derived from
          // them: reordered or Winograd-transformed kernels), new images each step, then one
          // weight set anew, whose change the next step must see.
          std::vector<exec::Feedback> keep;
          for (size_t i = 1; i < in.size(); ++i) keep.push_back({i, exec::Feedback::kKeep});
          auto cpu = exec::make_backend("cpu")->load(m);
          auto session = cpu->open_session(entry, keep);
          for (size_t i = 1; i < in.size(); ++i) session->set_state(i, in[i]);
          std::vector<Tensor> now = in;
          for (int step = 0; step < 3; ++step) {
            if (step > 0)
              now[0] = gen.inputs(*g, seed * 13 + 1000 * static_cast<uint32_t>(step))[0];
            if (step == 2) {  // a new first weight
              now[1] = gen.inputs(*g, seed * 31)[1];
              session->set_state(1, now[1]);
            }
            std::vector<Tensor> feed(in.size());
            feed[0] = now[0];
            expect_close(session->step(feed), exec::make_backend("ref")->load(m)->run(entry, now),
                         dt, what + " session step " + std::to_string(step));
          }
        }
        if (HasFailure()) {
          std::cerr << what << "'s module:\n" << hlo::print_module(*m) << "\n";
          return;
        }
      }
  // What the seeds reached (the plans of the f32 gradients and forwards), so that a generator
  // change that stops reaching the planner's layouts, Winograd or conv post-ops shows here.
  if (exec::cpu::layout_block_size() > 0) {  // (NETSPEC_CPU_LAYOUT=0 or no AVX2: none)
    EXPECT_GT(covered.blocked_values, 0);
    EXPECT_GT(covered.reorders, 0);
  }
  EXPECT_GT(covered.inplace, 0);
  EXPECT_GT(covered_eval.conv_postops, 0);
  if (GetParam() % 2 == 1) {
    EXPECT_GT(covered.winograd_convs, 0);
  }
  EXPECT_EQ(covered.ref_steps + covered_eval.ref_steps, 0) << [&] {
    std::string f;
    for (const std::string& x : fallbacks) f += x + " ";
    return f;
  }();
}

INSTANTIATE_TEST_SUITE_P(Seeds, CpuRandomNets, ::testing::Range(0, 8));

}  // namespace
}  // namespace netspec::testing
