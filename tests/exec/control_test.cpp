// Control flow and calls on every backend: while (with a value captured from the enclosing
// function), if, case (out-of-range index runs the last branch), tuple / get_tuple_element,
// optimization_barrier and func.call of a private helper.
#include "exec/test_util.h"

namespace netspec::testing {
namespace {

class ControlTest : public BackendTest {};

TEST_P(ControlTest, WhileSumsWithCapturedStep) {
  // i = 0, s = 0; while i < n: s += i * step; i += 1. `step` is captured from @main.
  auto got = run({i32({}, {5}), i32({}, {3})}, [](Builder& b, const Values& a) {
    Value* n = a[0];
    Value* step = a[1];
    return b.while_(
        {b.scalar(0, DType::kI32), b.scalar(0, DType::kI32)},
        [n](Builder& r, const Values& p) { return Values{r.compare(p[0], n, "LT")}; },
        [step](Builder& r, const Values& p) {
          return Values{r.add(p[0], r.scalar(1, DType::kI32)), r.add(p[1], r.multiply(p[0], step))};
        });
  });
  ASSERT_EQ(got.size(), 2u);
  expect_equal(got[0], i32({}, {5}));
  expect_equal(got[1], i32({}, {30}));  // 3 * (0+1+2+3+4)
}

TEST_P(ControlTest, WhileZeroIterations) {
  auto got = run({f32({2}, {1, 2})}, [](Builder& b, const Values& a) {
    return b.while_(
        {a[0]}, [](Builder& r, const Values&) { return Values{r.scalar(0, DType::kI1)}; },
        [](Builder& r, const Values& p) { return Values{r.add(p[0], p[0])}; });
  });
  expect_equal(got.at(0), f32({2}, {1, 2}));
}

TEST_P(ControlTest, IfPicksBranchAndSeesOuterValues) {
  auto run_if = [&](int64_t p) {
    return run1({i1({}, {p}), f32({2}, {1, 2})}, [](Builder& b, const Values& a) {
      Value* x = a[1];
      return b.if_(
          a[0], [x](Builder& r, const Values&) { return Values{r.add(x, x)}; },
          [x](Builder& r, const Values&) { return Values{r.negate(x)}; });
    });
  };
  expect_equal(run_if(1), f32({2}, {2, 4}));
  expect_equal(run_if(0), f32({2}, {-1, -2}));
}

TEST_P(ControlTest, CaseOutOfRangeRunsLastBranch) {
  auto run_case = [&](int64_t i) {
    return run1({i32({}, {i})}, [](Builder& b, const Values& a) {
      std::vector<hlo::RegionFn> branches;
      for (int k = 0; k < 3; ++k)
        branches.push_back(
            [k](Builder& r, const Values&) { return Values{r.scalar(10 * (k + 1), DType::kF32)}; });
      return b.case_(a[0], branches);
    });
  };
  expect_equal(run_case(0), f32({}, {10}));
  expect_equal(run_case(1), f32({}, {20}));
  expect_equal(run_case(2), f32({}, {30}));
  expect_equal(run_case(7), f32({}, {30}));
  expect_equal(run_case(-1), f32({}, {30}));
}

TEST_P(ControlTest, TupleAndGetTupleElement) {
  auto got = run({f32({2}, {1, 2}), i32({}, {7})}, [](Builder& b, const Values& a) {
    Value* t = b.tuple({a[0], a[1]});
    Value* nested = b.tuple({t, a[0]});
    Value* inner = b.get_tuple_element(nested, 0);
    return Values{b.get_tuple_element(inner, 1), b.get_tuple_element(nested, 1)};
  });
  ASSERT_EQ(got.size(), 2u);
  expect_equal(got[0], i32({}, {7}));
  expect_equal(got[1], f32({2}, {1, 2}));
}

TEST_P(ControlTest, OptimizationBarrierIsIdentity) {
  auto got = run({f32({2}, {1, kNaN}), i1({}, {1})}, [](Builder& b, const Values& a) {
    return b.optimization_barrier({a[0], a[1]});
  });
  ASSERT_EQ(got.size(), 2u);
  expect_equal(got[0], f32({2}, {1, kNaN}));
  expect_equal(got[1], i1({}, {1}));
}

TEST_P(ControlTest, CallPrivateHelper) {
  auto m = std::make_shared<hlo::Module>();
  hlo::Func* sq = m->add_func(
      "square_plus", {Type::tensor(DType::kF32, {2}), Type::tensor(DType::kF32, {})}, false);
  {
    Builder b(sq->body.get());
    Value* x = sq->arg(0);
    Value* c = b.broadcast_in_dim(sq->arg(1), {2}, {});
    b.func_return({b.add(b.multiply(x, x), c)});
  }
  hlo::Func* mainf = m->add_func("main", {Type::tensor(DType::kF32, {2})});
  {
    Builder b(mainf->body.get());
    Value* one = b.scalar(1, DType::kF32);
    Value* y = b.call(*sq, {mainf->arg(0), one}).at(0);
    b.func_return({b.call(*sq, {y, one}).at(0)});
  }
  // (x^2 + 1)^2 + 1 at x = 1, 2: 5, 26.
  expect_equal(run_module(backend(), m, {f32({2}, {1, 2})}).at(0), f32({2}, {5, 26}));
}

TEST_P(ControlTest, MissingOrMistypedInputsAreErrors) {
  auto m = make_module({Type::tensor(DType::kF32, {2})},
                       [](Builder& b, const Values& a) { return Values{b.negate(a[0])}; });
  EXPECT_THROW(run_module(backend(), m, {}), Error);
  EXPECT_THROW(run_module(backend(), m, {f32({3}, {1, 2, 3})}), Error);
  EXPECT_THROW(run_module(backend(), m, {i32({2}, {1, 2})}), Error);
}

NETSPEC_ON_BACKENDS(ControlTest);

}  // namespace
}  // namespace netspec::testing
