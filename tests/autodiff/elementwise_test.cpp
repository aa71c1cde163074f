// Elementwise VJP rules checked against central differences in f64 on random shapes.
#include "test_util.h"

namespace netspec::autodiff::testing {
namespace {

Shape random_shape(std::mt19937& g) {
  Shape s;
  int64_t r = rand_int(g, 0, 3);
  for (int64_t i = 0; i < r; ++i) s.push_back(rand_int(g, 1, 4));
  return s;
}

struct UnaryCase {
  OpKind kind;
  bool positive;  // domain needs x > 0
};

TEST(ElementwiseVjp, UnaryOpsMatchFiniteDifferences) {
  std::mt19937 g(1);
  for (UnaryCase c : std::vector<UnaryCase>{{OpKind::kNegate, false},
                                            {OpKind::kAbs, false},
                                            {OpKind::kExponential, false},
                                            {OpKind::kExponentialMinusOne, false},
                                            {OpKind::kLog, true},
                                            {OpKind::kLogPlusOne, true},
                                            {OpKind::kLogistic, false},
                                            {OpKind::kTanh, false},
                                            {OpKind::kErf, false},
                                            {OpKind::kSqrt, true},
                                            {OpKind::kRsqrt, true},
                                            {OpKind::kCbrt, true},
                                            {OpKind::kSine, false},
                                            {OpKind::kCosine, false},
                                            {OpKind::kTan, false}}) {
    SCOPED_TRACE(std::string(hlo::op_name(c.kind)));
    Shape s = random_shape(g);
    auto m = make_module(
        {f32(s)}, [&](Builder& b, auto a) { return std::vector<Value*>{b.unary(c.kind, a[0])}; });
    GradcheckOptions o;
    o.positive = c.positive;
    o.seed = static_cast<uint64_t>(c.kind);
    expect_grads(*m, o);
  }
}

TEST(ElementwiseVjp, BinaryOpsMatchFiniteDifferences) {
  std::mt19937 g(2);
  for (OpKind k :
       {OpKind::kAdd, OpKind::kSubtract, OpKind::kMultiply, OpKind::kDivide, OpKind::kMaximum,
        OpKind::kMinimum, OpKind::kAtan2, OpKind::kPower, OpKind::kRemainder}) {
    SCOPED_TRACE(std::string(hlo::op_name(k)));
    Shape s = random_shape(g);
    auto m = make_module({f32(s), f32(s)}, [&](Builder& b, auto a) {
      return std::vector<Value*>{b.binary(k, a[0], a[1])};
    });
    GradcheckOptions o;
    o.positive = k == OpKind::kPower;  // a^b needs a > 0 for the b-gradient
    o.seed = static_cast<uint64_t>(k);
    if (k == OpKind::kRemainder) o.positive = true;  // a/b crosses no integer within ±h
    expect_grads(*m, o);
  }
}

TEST(ElementwiseVjp, SelectClampConvertAndPiecewiseConstant) {
  Shape s{3, 4};
  // select(x > y, x*y, x - y) + floor(x) (floor contributes nothing) + convert round trip.
  auto m = make_module({f32(s), f32(s)}, [&](Builder& b, auto a) {
    Value* p = b.compare(a[0], a[1], "GT");
    Value* sel = b.select(p, b.multiply(a[0], a[1]), b.subtract(a[0], a[1]));
    Value* fl = b.floor(a[0]);
    Value* cv = b.convert(b.convert(a[1], DType::kF32), DType::kF32);
    return std::vector<Value*>{b.add(b.add(sel, fl), cv)};
  });
  expect_grads(*m);
  // clamp with scalar bounds: d lo and d hi are sums over the clipped elements.
  auto m2 = make_module({f32({}), f32(s), f32({})}, [&](Builder& b, auto a) {
    return std::vector<Value*>{b.clamp(b.negate(b.abs(a[0])), a[1], b.abs(a[2]))};
  });
  GradcheckOptions o;
  o.lo = 0.3;
  expect_grads(*m2, o);
}

TEST(ElementwiseVjp, ClosedFormSumOfSquares) {
  // f(x) = sum(x²) -> df/dx = 2x exactly.
  auto m = make_module({f32({4})}, [&](Builder& b, auto a) {
    return std::vector<Value*>{
        b.reduce(b.multiply(a[0], a[0]), b.scalar(0, DType::kF32), {0}, OpKind::kAdd)};
  });
  hlo::Func* g = vjp(*m->find("main"), {0});
  auto exe = exec::make_backend("ref")->load(std::shared_ptr<const hlo::Module>(std::move(m)));
  Tensor x = Tensor::from<float>(DType::kF32, {4}, {1.f, -2.f, 0.5f, 3.f});
  auto out = exe->run(g->name, {x, Tensor::scalar_f32(1.f)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FLOAT_EQ(out[0].data<float>()[0], 1 + 4 + 0.25f + 9);
  std::vector<float> want{2, -4, 1, 6};
  for (int j = 0; j < 4; ++j)
    EXPECT_FLOAT_EQ(out[1].data<float>()[j], want[static_cast<size_t>(j)]);
}

// An f32 module widened to f64 (emit --dtype f64, gradcheck) must carry erf's 2/√π to f64
// precision: its f32 rounding alone is off by 1.6e-8, which JAX's own f64 gradient of the
// widened forward (the f64 JAX set, detr's GELU) showed as 2.3e-9 in the conv weights.
TEST(ElementwiseVjp, ErfBackwardWidenedToF64KeepsItsConstantExact) {
  auto m = make_module({f32({4})}, [&](Builder& b, auto a) {
    return std::vector<Value*>{b.reduce(b.erf(a[0]), b.scalar(0, DType::kF32), {0}, OpKind::kAdd)};
  });
  hlo::Func* g = vjp(*m->find("main"), {0});
  const std::string name = g->name;
  hlo::convert_float_types(*m, DType::kF32, DType::kF64);
  auto exe = exec::make_backend("ref")->load(std::shared_ptr<const hlo::Module>(std::move(m)));
  const std::vector<double> xs{0.3, -1.25, 0.0, 2.0};
  auto out = exe->run(name, {Tensor::from<double>(DType::kF64, {4}, xs), Tensor::from<double>(DType::kF64, {}, {1.0})});
  ASSERT_EQ(out.size(), 2u);
  for (size_t j = 0; j < xs.size(); ++j) {
    const double want = M_2_SQRTPI * std::exp(-xs[j] * xs[j]);
    EXPECT_NEAR(out[1].as_double(j), want, 1e-15 * want) << j;
  }
}

// At a kink FD has no answer, so the convention is asserted: relu = max(x, 0) and relu6 =
// min(max(x, 0), 6) give 0 at x = 0 and x = 6 (PyTorch's threshold/hardtanh backward), 1 inside.
TEST(ElementwiseVjp, ReluAndRelu6KinksGiveZeroAsPyTorch) {
  auto m = make_module({f32({5})}, [&](Builder& b, auto a) {
    Value* zero = b.constant_splat(0, a[0]->type);
    Value* six = b.constant_splat(6, a[0]->type);
    Value* relu = b.maximum(a[0], zero);
    Value* relu6 = b.minimum(relu, six);
    return std::vector<Value*>{b.reduce(b.add(relu, relu6), b.scalar(0, DType::kF32), {0},
                                        OpKind::kAdd)};
  });
  hlo::Func* g = vjp(*m->find("main"), {0});
  auto exe = exec::make_backend("ref")->load(std::shared_ptr<const hlo::Module>(std::move(m)));
  Tensor x = Tensor::from<float>(DType::kF32, {5}, {-1.f, 0.f, 3.f, 6.f, 7.f});
  auto out = exe->run(g->name, {x, Tensor::scalar_f32(1.f)});
  ASSERT_EQ(out.size(), 2u);
  // d/dx [relu + relu6]: x=-1: 0; x=0: 0 (both kinks); x=3: 2; x=6: 1 (relu6 kink 0); x=7: 1.
  std::vector<float> want{0, 0, 2, 1, 1};
  for (size_t j = 0; j < 5; ++j) EXPECT_EQ(out[1].data<float>()[j], want[j]) << "x = " << j;
}

TEST(ElementwiseVjp, IntegerOpsGiveZeroAndMissingRuleIsAnError) {
  // y = x * convert(iota) : iota and convert-from-int carry no cotangent, x's is iota.
  auto m = make_module({f32({3})}, [&](Builder& b, auto a) {
    Value* io = b.convert(b.iota(i64({3}), 0), DType::kF32);
    return std::vector<Value*>{b.multiply(a[0], io)};
  });
  hlo::Func* g = vjp(*m->find("main"), {0});
  auto exe = exec::make_backend("ref")->load(std::shared_ptr<const hlo::Module>(std::move(m)));
  auto out = exe->run(g->name, {Tensor::from<float>(DType::kF32, {3}, {5, 6, 7}),
                                Tensor::from<float>(DType::kF32, {3}, {1, 1, 2})});
  EXPECT_FLOAT_EQ(out[1].data<float>()[0], 0);
  EXPECT_FLOAT_EQ(out[1].data<float>()[1], 1);
  EXPECT_FLOAT_EQ(out[1].data<float>()[2], 4);

  // A map whose body is not purely elementwise has no rule: the error names it.
  auto m2 = make_module({f32({3})}, [&](Builder& b, auto a) {
    return b.map({a[0]}, {0}, [](Builder& rb, const std::vector<Value*>& x) {
      return std::vector<Value*>{rb.multiply(rb.reshape(x[0], {}), x[0])};
    });
  });
  try {
    vjp(*m2->find("main"), {0});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stablehlo.map"), std::string::npos) << e.what();
  }
}

TEST(ElementwiseVjp, ElementwiseMapIsLiftedAndDifferentiated) {
  // map(x, y){a, b -> a·sin(b) + 2} over 2x3: differentiated like the same ops on whole tensors.
  auto m = make_module({f32({2, 3}), f32({2, 3})}, [&](Builder& b, auto a) {
    return b.map({a[0], a[1]}, {0, 1}, [](Builder& rb, const std::vector<Value*>& x) {
      return std::vector<Value*>{
          rb.add(rb.multiply(x[0], rb.sine(x[1])), rb.scalar(2, DType::kF32))};
    });
  });
  expect_grads(*m);
  hlo::Func* gf = vjp(*m->find("main"), {0, 1});
  EXPECT_EQ(count_ops(*gf, OpKind::kMap), 0);
}

TEST(Gradcheck, ZeroAbsPassesAnExactlyZeroGradientAndNothingElse) {
  // f(x, b) = Σ sin(x + b - mean(x + b)): b cancels, so df/db = 0 exactly; the vjp's rounding
  // noise against finite differences' is a relative error near 1. zero_abs passes that input;
  // x's gradient is still checked relatively.
  auto m = make_module({f32({8}), f32({})}, [&](Builder& b, auto a) {
    Value* y = b.add(a[0], b.broadcast_in_dim(a[1], {8}, {}));
    Value* sum = b.reduce(y, b.scalar(0, DType::kF32), {0}, OpKind::kAdd);
    Value* mean = b.divide(sum, b.scalar(8, DType::kF32));
    Value* c = b.subtract(y, b.broadcast_in_dim(mean, {8}, {}));
    return std::vector<Value*>{
        b.reduce(b.unary(OpKind::kSine, c), b.scalar(0, DType::kF32), {0}, OpKind::kAdd)};
  });
  GradcheckOptions o;
  GradcheckReport plain = gradcheck(*m, o);
  ASSERT_EQ(plain.inputs.size(), 2u);
  EXPECT_TRUE(plain.inputs[0].ok) << plain.str();
  EXPECT_FALSE(plain.inputs[1].ok) << "b's gradient is noise vs noise: " << plain.str();
  EXPECT_LT(plain.inputs[1].max_abs, 1e-9) << plain.str();
  o.zero_abs = 1e-9;
  GradcheckReport z = gradcheck(*m, o);
  EXPECT_TRUE(z.ok) << z.str();
  EXPECT_LE(z.inputs[0].max_rel, z.tolerance);
}

}  // namespace
}  // namespace netspec::autodiff::testing
