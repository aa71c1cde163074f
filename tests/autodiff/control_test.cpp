// Control flow, calls, custom VJPs, tuples, and the properties of generated modules: cleanup ran
// (no duplicates), forward values are reused, and forward+VJP round-trips through the printer
// and parser with the same numbers on both executors.
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "test_util.h"

namespace netspec::autodiff::testing {
namespace {

Value* scramble(Builder& b, Value* v) { return b.multiply(v, b.exponential(v)); }

// x^8 by a stablehlo.while squaring x three times (counter i32 from 0 while < 3).
Value* square_three_times(Builder& b, Value* x) {
  Value* zero = b.constant(Tensor::from<int>(DType::kI32, {}, {0}));
  auto r = b.while_(
      {zero, x},
      [](Builder& rb, const std::vector<Value*>& s) {
        return std::vector<Value*>{
            rb.compare(s[0], rb.constant(Tensor::from<int>(DType::kI32, {}, {3})), "LT")};
      },
      [](Builder& rb, const std::vector<Value*>& s) {
        Value* one = rb.constant(Tensor::from<int>(DType::kI32, {}, {1}));
        return std::vector<Value*>{rb.add(s[0], one), rb.multiply(s[1], s[1])};
      });
  return r[1];
}

TEST(ControlVjp, IfDifferentiatesEachBranch) {
  for (int taken = 0; taken < 2; ++taken) {
    auto m = make_module({f32({3}), f32({3})}, [&](Builder& b, auto a) {
      Value* p = b.constant(Tensor::from<int>(DType::kI1, {}, {taken}));
      auto r = b.if_(
          p,
          [&](Builder& rb, auto) { return std::vector<Value*>{rb.multiply(rb.sine(a[0]), a[1])}; },
          [&](Builder& rb, auto) { return std::vector<Value*>{rb.add(scramble(rb, a[1]), a[1])}; });
      return std::vector<Value*>{scramble(b, r[0])};
    });
    expect_grads(*m);
  }
}

TEST(ControlVjp, CaseAndTuples) {
  for (int idx = 0; idx < 3; ++idx) {
    auto m = make_module({f32({2}), f32({2})}, [&](Builder& b, auto a) {
      Value* i = b.constant(Tensor::from<int>(DType::kI32, {}, {idx}));
      auto r = b.case_(
          i, {[&](Builder& rb, auto) { return std::vector<Value*>{rb.tanh(a[0])}; },
              [&](Builder& rb, auto) { return std::vector<Value*>{rb.multiply(a[0], a[1])}; },
              [&](Builder&, auto) { return std::vector<Value*>{a[1]}; }});
      Value* t = b.tuple({r[0], a[0]});
      return std::vector<Value*>{
          b.add(b.get_tuple_element(t, 0), scramble(b, b.get_tuple_element(t, 1)))};
    });
    expect_grads(*m);
  }
}

TEST(ControlVjp, CallIsDifferentiatedThroughItsCallee) {
  auto m = std::make_unique<hlo::Module>();
  hlo::Func* sq = m->add_func("square_plus", {f32({4}), f32({4})}, false);
  {
    Builder b(sq->body.get());
    b.func_return({b.add(b.multiply(sq->arg(0), sq->arg(0)), b.sine(sq->arg(1)))});
  }
  hlo::Func* f = m->add_func("main", {f32({4}), f32({4})});
  {
    Builder b(f->body.get());
    Value* y = b.call(*sq, {f->arg(0), f->arg(1)})[0];
    b.func_return({b.call(*sq, {y, f->arg(0)})[0]});
  }
  expect_grads(*m);
}

// Gradient-checks @main on ref and on the cpu executor (whose planner rewrites the loops).
void expect_grads_on_both(const hlo::Module& m, GradcheckOptions o = {}) {
  for (const char* backend : {"ref", "cpu"}) {
    SCOPED_TRACE(backend);
    o.backend = backend;
    expect_grads(m, o);
  }
}

// A counted while: i from `start` while i < `stop`, body(i, state) -> next state (i + 1 added).
std::vector<Value*> counted(
    Builder& b, int start, int stop, const std::vector<Value*>& state,
    const std::function<std::vector<Value*>(Builder&, Value* i, const std::vector<Value*>&)>& f) {
  std::vector<Value*> init = {b.constant(Tensor::from<int>(DType::kI32, {}, {start}))};
  init.insert(init.end(), state.begin(), state.end());
  auto r = b.while_(
      init,
      [stop](Builder& rb, const std::vector<Value*>& s) {
        return std::vector<Value*>{
            rb.compare(s[0], rb.constant(Tensor::from<int>(DType::kI32, {}, {stop})), "LT")};
      },
      [&](Builder& rb, const std::vector<Value*>& s) {
        std::vector<Value*> next = {
            rb.add(s[0], rb.constant(Tensor::from<int>(DType::kI32, {}, {1})))};
        for (Value* v : f(rb, s[0], std::vector<Value*>(s.begin() + 1, s.end()))) next.push_back(v);
        return next;
      });
  return std::vector<Value*>(r.begin() + 1, r.end());
}

TEST(ControlVjp, CountedWhileIsDifferentiatedTurnByTurn) {
  auto m = make_module({f32({2})}, [&](Builder& b, auto a) {
    return std::vector<Value*>{square_three_times(b, a[0])};
  });
  GradcheckOptions o;
  o.lo = 0.8, o.hi = 1.2;
  expect_grads_on_both(*m, o);
  EXPECT_EQ(count_ops(*vjp(*m->find("main"), {0}), OpKind::kWhile),
            3);  // forward, stacking, reverse
}

// An RNN cell h <- tanh(W·h + x) four turns from turn 2 (start != 0): gradients of the initial
// state, the captured weight and the captured input add up over the turns.
TEST(ControlVjp, WhileWithCapturedWeightsLikeAnRnn) {
  auto m = make_module({f32({3}), f32({3, 3}), f32({3})}, [&](Builder& b, auto a) {
    Value* w = a[1];
    Value* x = a[2];
    auto r = counted(b, 2, 6, {a[0]}, [&](Builder& rb, Value*, const std::vector<Value*>& s) {
      hlo::DotDims d;
      d.lhs_contracting = {1}, d.rhs_contracting = {0};
      return std::vector<Value*>{rb.tanh(rb.add(rb.dot_general(w, s[0], d), x))};
    });
    return std::vector<Value*>{r[0]};
  });
  expect_grads_on_both(*m);
}

// A scan: each turn writes its state into row i of an output stack (not stacked again by the
// VJP: the loop only writes it), reads the previous row back, and swaps two more carries; an
// integer carry rides along.
TEST(ControlVjp, WhileStackingRowsAndSwappingCarries) {
  auto m = make_module({f32({4}), f32({4})}, [&](Builder& b, auto a) {
    Value* zeros = b.constant_splat(0, f32({3, 4}));
    Value* k0 = b.constant(Tensor::from<int>(DType::kI32, {}, {7}));
    auto r = counted(
        b, 0, 3, {a[0], zeros, a[1], b.negate(a[0]), k0},
        [&](Builder& rb, Value* i, const std::vector<Value*>& s) {
          Value* zero = rb.constant(Tensor::from<int>(DType::kI32, {}, {0}));
          Value* prev = rb.reshape(
              rb.dynamic_slice(
                  s[1],
                  {rb.subtract(i, rb.constant(Tensor::from<int>(DType::kI32, {}, {1}))), zero},
                  {1, 4}),
              {4});
          Value* h = rb.add(rb.sine(rb.multiply(s[0], s[2])), rb.multiply(prev, s[3]));
          Value* rows = rb.dynamic_update_slice(s[1], rb.reshape(h, {1, 4}), {i, zero});
          return std::vector<Value*>{h, rows, s[3], s[2], rb.add(s[4], i)};
        });
    return std::vector<Value*>{r[0], r[1], r[2]};
  });
  expect_grads_on_both(*m);
  // The same without the read-back: the row stack is written whole and never read, so the VJP
  // stacks only the other states (one stack fewer).
  auto w = make_module({f32({4})}, [&](Builder& b, auto a) {
    auto r = counted(b, 0, 3, {a[0], b.constant_splat(0, f32({3, 4}))},
                     [&](Builder& rb, Value* i, const std::vector<Value*>& s) {
                       Value* zero = rb.constant(Tensor::from<int>(DType::kI32, {}, {0}));
                       Value* h = rb.tanh(rb.multiply(s[0], s[0]));
                       return std::vector<Value*>{
                           h, rb.dynamic_update_slice(s[1], rb.reshape(h, {1, 4}), {i, zero})};
                     });
    return std::vector<Value*>{r[1]};
  });
  expect_grads_on_both(*w);
  EXPECT_EQ(hlo::state_written_whole_unread(
                *[&] {
                  const hlo::Op* loop = nullptr;
                  hlo::walk(*w->find("main")->body, [&](const hlo::Op& op) {
                    if (op.kind == OpKind::kWhile && !loop) loop = &op;
                  });
                  return loop;
                }(),
                2),
            true);
}

// Zero turns (y = x), a loop in a loop (the inner one capturing the outer state), an if in a
// loop and a loop in an if.
TEST(ControlVjp, WhileNestedInWhileAndIf) {
  auto m = make_module({f32({3}), f32({3})}, [&](Builder& b, auto a) {
    Value* c = a[1];
    auto none = counted(b, 5, 5, {a[0]}, [&](Builder& rb, Value*, const std::vector<Value*>& s) {
      return std::vector<Value*>{rb.multiply(s[0], s[0])};
    });
    auto outer =
        counted(b, 0, 2, {none[0]}, [&](Builder& rb, Value*, const std::vector<Value*>& s) {
          Value* h = s[0];
          auto inner = counted(
              rb, 0, 3, {rb.tanh(h)}, [&](Builder& ib, Value*, const std::vector<Value*>& t) {
                return std::vector<Value*>{ib.add(ib.multiply(t[0], h), ib.sine(c))};
              });
          Value* p = rb.constant(Tensor::from<int>(DType::kI1, {}, {1}));
          auto br = rb.if_(
              p, [&](Builder& tb, auto) { return std::vector<Value*>{tb.multiply(inner[0], c)}; },
              [&](Builder&, auto) { return std::vector<Value*>{inner[0]}; });
          return std::vector<Value*>{rb.tanh(br[0])};
        });
    Value* p = b.constant(Tensor::from<int>(DType::kI1, {}, {0}));
    auto br = b.if_(
        p, [&](Builder& tb, auto) { return std::vector<Value*>{tb.negate(outer[0])}; },
        [&](Builder& fb, auto) {
          return counted(fb, 0, 2, {outer[0]},
                         [&](Builder& rb, Value*, const std::vector<Value*>& s) {
                           return std::vector<Value*>{rb.multiply(rb.sine(s[0]), c)};
                         });
        });
    return std::vector<Value*>{br[0]};
  });
  expect_grads_on_both(*m);
}

// The generated backward of a loop is made of counted loops too, so it differentiates again
// (a Hessian-vector product through an RNN).
TEST(ControlVjp, WhileBackwardDifferentiatesAgain) {
  auto m = make_module({f32({3}), f32({3})}, [&](Builder& b, auto a) {
    Value* x = a[1];
    auto r = counted(b, 0, 3, {a[0]}, [&](Builder& rb, Value*, const std::vector<Value*>& s) {
      return std::vector<Value*>{rb.tanh(rb.add(rb.multiply(s[0], x), x))};
    });
    return std::vector<Value*>{r[0]};
  });
  vjp(*m->find("main"), {0, 1});
  GradcheckOptions o;
  o.entry = "main_vjp";
  o.wrt = {0, 1, 2};  // h0, x and the cotangent
  expect_grads_on_both(*m, o);
}

// A while without a static trip count (its bound an input) is refused by name.
TEST(ControlVjp, WhileWithoutAStaticTripCountIsRefusedWithItsName) {
  auto m = make_module({f32({2}), Type::tensor(DType::kI32, {})}, [&](Builder& b, auto a) {
    Value* n = a[1];
    auto r = b.while_(
        {b.constant(Tensor::from<int>(DType::kI32, {}, {0})), a[0]},
        [n](Builder& rb, const std::vector<Value*>& s) {
          return std::vector<Value*>{rb.compare(s[0], n, "LT")};
        },
        [](Builder& rb, const std::vector<Value*>& s) {
          return std::vector<Value*>{
              rb.add(s[0], rb.constant(Tensor::from<int>(DType::kI32, {}, {1}))),
              rb.multiply(s[1], s[1])};
        });
    return std::vector<Value*>{r[1]};
  });
  try {
    vjp(*m->find("main"), {0});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stablehlo.while"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("static trip count"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("custom VJP"), std::string::npos) << e.what();
  }
}

TEST(CustomVjp, WhileLoopWithHandWrittenBackward) {
  // x -> x^(2^3) by a while loop squaring three times; backward: 8·x^7·dy (hand-written).
  auto m = make_module({f32({3})}, [&](Builder& b, auto a) {
    auto fwd = [](Builder& fb, const std::vector<Value*>& x) {
      return std::vector<Value*>{square_three_times(fb, x[0])};
    };
    auto bwd = [](Builder& bb, const CustomVjpArgs& c) {
      // dx = dy · 8 · y / x  (y = x^8)
      Value* eight = bb.constant_splat(8, c.args[0]->type);
      return std::vector<Value*>{
          bb.multiply(c.result_cots[0], bb.divide(bb.multiply(eight, c.results[0]), c.args[0]))};
    };
    Value* y = call_with_custom_vjp(b, "pow8__f32_3", {a[0]}, fwd, bwd)[0];
    return std::vector<Value*>{y};
  });
  GradcheckOptions o;
  o.lo = 0.8;
  o.hi = 1.2;
  expect_grads(*m, o);
  // The registry is keyed by prefix too: a re-parsed module finds "pow8" for @pow8__anything.
  register_custom_vjp("pow8", *find_custom_vjp("pow8__f32_3"));
  EXPECT_NE(find_custom_vjp("pow8__f64_7"), nullptr);
  unregister_custom_vjp("pow8");
  unregister_custom_vjp("pow8__f32_3");
  EXPECT_EQ(find_custom_vjp("pow8__f32_3"), nullptr);
}

// gtest_discover_tests runs each test in its own process, and nothing here calls
// autodiff::stop_gradient(): the zero backward of a parsed @stop_gradient__* must be known anyway.
TEST(CustomVjp, ParsedStopGradientHasAZeroBackwardInAFreshProcess) {
  const std::string text = R"(module @m {
  func.func private @stop_gradient__4f32(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<f32> {
    %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = call @stop_gradient__4f32(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = stablehlo.multiply %1, %arg0 : tensor<4xf32>
    %3 = stablehlo.reduce(%2 init: %0) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    return %3 : tensor<f32>
  }
}
)";
  std::shared_ptr<hlo::Module> m = hlo::parse_module(text, "sg.mlir");
  hlo::Func* gf = vjp(*m->find("main"), {0});
  std::vector<float> x{1.5f, -2.f, 0.25f, 3.f};
  auto out = exec::make_backend("ref")
                 ->load(std::shared_ptr<const hlo::Module>(m))
                 ->run(gf->name, {Tensor::from<float>(DType::kF32, {4}, x), Tensor::scalar_f32(1)});
  ASSERT_EQ(out.size(), 2u);
  // d/dx Σ sg(x)·x = sg(x) = x; differentiating through the identity would give 2x.
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(out[1].as_double(i), x[i]) << i;
}

TEST(CustomVjp, SoftmaxCrossEntropySeedReplacesTheOpsInside) {
  // loss = -Σ t·log softmax(z) per row; custom backward dz = (softmax(z) - t)·dy.
  auto m = make_module({f32({2, 3}), f32({2, 3})}, [&](Builder& b, auto a) {
    auto fwd = [](Builder& fb, const std::vector<Value*>& x) {
      Value* z = x[0];
      Value* mx = fb.reduce(z, fb.scalar(-1e30, DType::kF32), {1}, OpKind::kMaximum);
      Value* sh = fb.subtract(z, fb.broadcast_in_dim(mx, {2, 3}, {0}));
      Value* lse =
          fb.log(fb.reduce(fb.exponential(sh), fb.scalar(0, DType::kF32), {1}, OpKind::kAdd));
      Value* logp = fb.subtract(sh, fb.broadcast_in_dim(lse, {2, 3}, {0}));
      return std::vector<Value*>{fb.negate(
          fb.reduce(fb.multiply(x[1], logp), fb.scalar(0, DType::kF32), {1}, OpKind::kAdd))};
    };
    auto bwd = [](Builder& bb, const CustomVjpArgs& c) {
      Value* z = c.args[0];
      Type t = z->type;
      Value* mx = bb.reduce(z, bb.scalar(-1e30, t.dtype()), {1}, OpKind::kMaximum);
      Value* e = bb.exponential(bb.subtract(z, bb.broadcast_in_dim(mx, t.shape(), {0})));
      Value* p =
          bb.divide(e, bb.broadcast_in_dim(bb.reduce(e, bb.scalar(0, t.dtype()), {1}, OpKind::kAdd),
                                           t.shape(), {0}));
      Value* dy = bb.broadcast_in_dim(c.result_cots[0], t.shape(), {0});
      return std::vector<Value*>{bb.multiply(bb.subtract(p, c.args[1]), dy), nullptr};
    };
    // The p - t seed assumes each row of t sums to 1: normalize the random targets.
    Value* tsum = b.reduce(a[1], b.scalar(0, DType::kF32), {1}, OpKind::kAdd);
    Value* t = b.divide(a[1], b.broadcast_in_dim(tsum, {2, 3}, {0}));
    return call_with_custom_vjp(b, "softmax_xent_test", {a[0], t}, fwd, bwd);
  });
  GradcheckOptions o;
  o.wrt = {0};
  o.positive_inputs[1] = true;
  expect_grads(*m, o);
  hlo::Func* gf = vjp(*m->find("main"), {0});
  EXPECT_EQ(count_ops(*gf, OpKind::kCall), 1);  // forward stays a call; backward is the custom one
  EXPECT_EQ(count_ops(*gf, OpKind::kLog), 0);   // nothing of the callee was differentiated
  unregister_custom_vjp("softmax_xent_test");
}

TEST(VjpModule, EdgeCasesOfTheSignature) {
  // Returns an input directly, the same value twice, an integer, and ignores input 2.
  auto m = make_module({f32({2}), f32({2}), f32({2}), i64({2})}, [&](Builder& b, auto a) {
    Value* s = b.sine(a[1]);
    return std::vector<Value*>{a[0], s, s, a[3]};
  });
  hlo::Func* gf = vjp(*m->find("main"), {0, 1, 2});
  EXPECT_EQ(gf->num_args(), 8u);
  EXPECT_EQ(gf->result_types.size(), 7u);
  auto exe = exec::make_backend("ref")->load(std::shared_ptr<const hlo::Module>(std::move(m)));
  auto t = [](std::vector<float> v) { return Tensor::from<float>(DType::kF32, {2}, v); };
  Tensor ints = Tensor::from<int64_t>(DType::kI64, {2}, {7, 8});
  auto out = exe->run(gf->name, {t({1, 2}), t({0.5f, -1}), t({3, 4}), ints, t({10, 20}), t({1, 2}),
                                 t({3, 4}), ints});
  ASSERT_EQ(out.size(), 7u);
  EXPECT_FLOAT_EQ(out[4].data<float>()[1], 20);                        // xbar0 = ybar0
  EXPECT_FLOAT_EQ(out[5].data<float>()[0], (1 + 3) * std::cos(0.5f));  // xbar1 = (ybar1+ybar2)·cos
  EXPECT_FLOAT_EQ(out[5].data<float>()[1], (2 + 4) * std::cos(-1.f));
  EXPECT_FLOAT_EQ(out[6].data<float>()[0], 0);  // unused input: zeros
  EXPECT_EQ(out[3].data<int64_t>()[1], 8);      // integer output passes
  // Integer inputs cannot be differentiated.
  auto m2 = make_module({i64({2})}, [&](Builder&, auto a) { return std::vector<Value*>{a[0]}; });
  EXPECT_THROW(vjp(*m2->find("main"), {0}), Error);
}

TEST(VjpModule, SecondOrderDifferentiatesTheGeneratedBackward) {
  // Gradient-check the VJP function itself: its rules' outputs (transposed convolutions,
  // select_and_scatter, broadcasts of reductions) must be differentiable in turn.
  auto m = make_module({f32({1, 2, 5, 5}), f32({3, 2, 2, 2})}, [&](Builder& b, auto a) {
    hlo::ConvOptions o;
    o.dims = hlo::ConvOptions::nchw(2);
    o.window_strides = {2, 1};
    o.padding = {{1, 0}, {0, 1}};
    Value* c = b.tanh(b.convolution(a[0], a[1], o));
    hlo::WindowOptions w;
    w.window_dimensions = {1, 1, 2, 2};
    Value* p = b.reduce_window(c, b.scalar(-std::numeric_limits<double>::infinity(), DType::kF32),
                               w, OpKind::kMaximum);
    return std::vector<Value*>{
        b.reduce(b.multiply(p, p), b.scalar(0, DType::kF32), {1, 2, 3}, OpKind::kAdd)};
  });
  vjp(*m->find("main"), {0, 1});
  GradcheckOptions o;
  o.entry = "main_vjp";
  o.wrt = {0, 1, 2};  // x, w and the cotangent ybar
  expect_grads(*m, o);
}

TEST(VjpModule, CleanupLeavesNoDuplicatesAndReusesForwardValues) {
  auto m = make_module({f32({4, 3}), f32({3, 5})}, [&](Builder& b, auto a) {
    hlo::DotDims mm{{}, {}, {1}, {0}};
    Value* y = b.logistic(b.dot_general(a[0], a[1], mm));
    return std::vector<Value*>{y, b.exponential(y)};
  });
  hlo::Func* gf = vjp(*m->find("main"), {0, 1});
  EXPECT_EQ(count_ops(*gf, OpKind::kLogistic), 1);
  EXPECT_EQ(count_ops(*gf, OpKind::kExponential), 1);
  EXPECT_EQ(count_ops(*gf, OpKind::kDotGeneral), 3);  // forward + two gradients
  // CSE fixpoint: running it again changes nothing.
  EXPECT_FALSE(hlo::cse(*gf));
  EXPECT_FALSE(hlo::dce(*gf));
}

TEST(VjpModule, RoundTripsThroughPrinterAndParserOnBothExecutors) {
  auto m = make_module({f32({2, 3, 5, 5}), f32({4, 3, 3, 3}), f32({4})}, [&](Builder& b, auto a) {
    hlo::ConvOptions o;
    o.dims = hlo::ConvOptions::nchw(2);
    o.window_strides = {2, 2};
    o.padding = {{1, 1}, {1, 1}};
    Value* c = b.convolution(a[0], a[1], o);
    Value* bias = b.broadcast_in_dim(a[2], c->type.shape(), {1});
    Value* r = b.maximum(b.add(c, bias), b.constant_splat(0, c->type));
    hlo::WindowOptions w;
    w.window_dimensions = {1, 1, 2, 2};
    w.window_strides = {1, 1, 1, 1};
    Value* p = b.reduce_window(r, b.scalar(-std::numeric_limits<double>::infinity(), DType::kF32),
                               w, OpKind::kMaximum);
    return std::vector<Value*>{
        b.reduce(b.multiply(p, p), b.scalar(0, DType::kF32), {0, 1, 2, 3}, OpKind::kAdd)};
  });
  hlo::Func* gf = vjp(*m->find("main"), {0, 1, 2});
  std::string text = hlo::print_module(*m);
  std::shared_ptr<const hlo::Module> parsed = hlo::parse_module(text, "vjp.mlir");
  EXPECT_EQ(hlo::print_module(*parsed), text);
  std::mt19937 g(7);
  std::uniform_real_distribution<float> u(-1, 1);
  auto rnd = [&](Shape s) {
    std::vector<float> v(static_cast<size_t>(num_elements(s)));
    for (auto& e : v) e = u(g);
    return Tensor::from<float>(DType::kF32, s, v);
  };
  std::vector<Tensor> in{rnd({2, 3, 5, 5}), rnd({4, 3, 3, 3}), rnd({4}), Tensor::scalar_f32(1)};
  std::shared_ptr<const hlo::Module> orig(std::move(m));
  auto ref_out = exec::make_backend("ref")->load(orig)->run(gf->name, in);
  auto ref_parsed = exec::make_backend("ref")->load(parsed)->run(gf->name, in);
  auto cpu_parsed = exec::make_backend("cpu")->load(parsed)->run(gf->name, in);
  ASSERT_EQ(ref_out.size(), 4u);
  for (size_t k = 0; k < ref_out.size(); ++k) {
    ASSERT_EQ(ref_out[k].shape(), ref_parsed[k].shape());
    ASSERT_EQ(ref_out[k].shape(), cpu_parsed[k].shape());
    double scale = 0;
    for (int64_t j = 0; j < ref_out[k].numel(); ++j)
      scale = std::max(scale, std::abs(ref_out[k].as_double(j)));
    for (int64_t j = 0; j < ref_out[k].numel(); ++j) {
      EXPECT_EQ(ref_out[k].as_double(j), ref_parsed[k].as_double(j))
          << "result " << k << " element " << j;
      EXPECT_NEAR(ref_out[k].as_double(j), cpu_parsed[k].as_double(j), 1e-4 * (1 + scale))
          << "result " << k << " element " << j;
    }
  }
}

}  // namespace
}  // namespace netspec::autodiff::testing
