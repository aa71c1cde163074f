// while / if / case / call bodies on the cpu executor's fast kernels (exec/cpu/plan/regions.cpp):
// every case runs on ref and on cpu (with NETSPEC_CPU_CHECK=1, which also compares each region
// step with the ref kernel), the results must be equal, and the plan must have no ref step.
// Covered: nested loops reading values two scopes out, several carried values with tuples in the
// body, a data-dependent exit, zero iterations, swapped carries, if/case with captures, a call in
// a loop body, calls inlined into the caller's plan, and dynamic_slice / dynamic_update_slice
// with clamped starts.
#include <cstdlib>

#include "exec/cpu/cpu_backend.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

struct CheckMode {
  CheckMode() { ::setenv("NETSPEC_CPU_CHECK", "1", 1); }
  ~CheckMode() { ::unsetenv("NETSPEC_CPU_CHECK"); }
};

// Runs body on ref and on cpu (check mode), expects equal results and no ref step in the plan;
// returns the cpu results.
std::vector<Tensor> cpu_equals_ref(const std::vector<Tensor>& in, const BodyFn& body) {
  std::vector<Type> ts;
  for (const auto& t : in) ts.push_back(type_of(t));
  auto m = make_module(ts, body);
  exec::cpu::PlanStats st = exec::cpu::plan_stats(*m->funcs[0]);
  EXPECT_EQ(st.ref_steps, 0) << "ref fallbacks: " << st.fallback_ops;
  EXPECT_FALSE(st.whole_function_on_ref);
  std::vector<Tensor> want = run_module("ref", m, in);
  CheckMode check;
  std::vector<Tensor> got = run_module("cpu", m, in);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    expect_equal(got[i], want[i], "result " + std::to_string(i));
  return got;
}

Value* i32c(Builder& b, int64_t v) { return b.scalar(static_cast<double>(v), DType::kI32); }

TEST(CpuRegions, NestedLoopsReadValuesTwoScopesOut) {
  // for i < 3: for j < 2: acc = acc * k + i ; k is computed in @main, i in the outer body.
  BodyFn body = [](Builder& b, const Values& a) {
    Value* k = b.add(a[1], a[1]);
    auto outer = b.while_(
        {i32c(b, 0), a[0]},
        [](Builder& c, const Values& s) { return Values{c.compare(s[0], i32c(c, 3), "LT")}; },
        [k](Builder& c, const Values& s) {
          Value* fi = c.broadcast_in_dim(c.convert(s[0], DType::kF32), s[1]->type.shape(), {});
          auto inner = c.while_(
              {i32c(c, 0), s[1]},
              [](Builder& d, const Values& t) { return Values{d.compare(t[0], i32c(d, 2), "LT")}; },
              [k, fi](Builder& d, const Values& t) {
                return Values{d.add(t[0], i32c(d, 1)), d.add(d.multiply(t[1], k), fi)};
              });
          return Values{c.add(s[0], i32c(c, 1)), inner[1]};
        });
    return Values{outer[1], k};
  };
  Tensor x = f32({3}, {1, -2, 0.5}), k = f32({3}, {0.5, 1, -1});
  auto out = cpu_equals_ref({x, k}, body);
  // k' = 2k = {1, 2, -2}; element 0: acc stays 1 +0,+0 (i=0), +1,+1, +2,+2 -> 7.
  EXPECT_FLOAT_EQ(out[0].data<float>()[0], 7.0f);
}

TEST(CpuRegions, SeveralCarriedValuesWithTuplesInTheBody) {
  // Fibonacci on tensors, the pair packed into a tuple and unpacked inside the body.
  BodyFn body = [](Builder& b, const Values& a) {
    auto r = b.while_(
        {i32c(b, 0), a[0], a[1]},
        [](Builder& c, const Values& s) { return Values{c.compare(s[0], i32c(c, 6), "LT")}; },
        [](Builder& c, const Values& s) {
          Value* t = c.tuple({s[1], s[2]});
          Value* x = c.get_tuple_element(t, 0);
          Value* y = c.get_tuple_element(t, 1);
          return Values{c.add(s[0], i32c(c, 1)), y, c.add(x, y)};
        });
    return Values{r[0], r[1], r[2]};
  };
  auto out = cpu_equals_ref({f32({2}, {0, 1}), f32({2}, {1, 1})}, body);
  EXPECT_EQ(out[0].as_int64(0), 6);
  expect_equal(out[1], f32({2}, {8, 13}));  // F6, F7 from (0,1) and F7, F8 from (1,1)
  expect_equal(out[2], f32({2}, {13, 21}));
}

TEST(CpuRegions, DataDependentExitAndZeroIterations) {
  // while (sum(x) < limit) x = x * 2: 1+2 = 3 -> 6 -> 12 -> 24 -> 48 -> 96 -> 192 (6 rounds);
  // with limit 1 the condition is false at once and x comes back unchanged.
  BodyFn body = [](Builder& b, const Values& a) {
    Value* limit = a[1];
    auto r = b.while_(
        {a[0], i32c(b, 0)},
        [limit](Builder& c, const Values& s) {
          Value* sum = c.reduce(s[0], c.scalar(0, DType::kF32), {0}, hlo::OpKind::kAdd);
          return Values{c.compare(sum, limit, "LT")};
        },
        [](Builder& c, const Values& s) {
          return Values{c.add(s[0], s[0]), c.add(s[1], i32c(c, 1))};
        });
    return Values{r[0], r[1]};
  };
  auto many = cpu_equals_ref({f32({2}, {1, 2}), f32({}, {100})}, body);
  expect_equal(many[0], f32({2}, {64, 128}));
  EXPECT_EQ(many[1].as_int64(0), 6);
  auto none = cpu_equals_ref({f32({2}, {1, 2}), f32({}, {1})}, body);
  expect_equal(none[0], f32({2}, {1, 2}));
  EXPECT_EQ(none[1].as_int64(0), 0);
}

TEST(CpuRegions, SwappedAndReshapedCarriesAreReadBeforeWritten) {
  // (a, b) <- (b, reshape(reshape(a))) three times: a value returned in another slot, and a view
  // of a carry, must not read a slot already overwritten in the same iteration.
  BodyFn body = [](Builder& b, const Values& a) {
    auto r = b.while_(
        {i32c(b, 0), a[0], a[1]},
        [](Builder& c, const Values& s) { return Values{c.compare(s[0], i32c(c, 3), "LT")}; },
        [](Builder& c, const Values& s) {
          Value* v = c.reshape(c.reshape(s[1], {4}), {2, 2});
          return Values{c.add(s[0], i32c(c, 1)), s[2], v};
        });
    return Values{r[1], r[2]};
  };
  Tensor x = f32({2, 2}, {1, 2, 3, 4}), y = f32({2, 2}, {5, 6, 7, 8});
  auto out = cpu_equals_ref({x, y}, body);
  expect_equal(out[0], y);  // odd number of swaps
  expect_equal(out[1], x);
}

TEST(CpuRegions, IfAndCaseReadOuterValuesInsideALoop) {
  // for i < 5: acc += case(i % 3){ k, 2k, -k (index out of range -> last) } ; then if (acc0 > 0).
  BodyFn body = [](Builder& b, const Values& a) {
    Value* k = a[1];
    auto r = b.while_(
        {i32c(b, 0), a[0]},
        [](Builder& c, const Values& s) { return Values{c.compare(s[0], i32c(c, 5), "LT")}; },
        [k](Builder& c, const Values& s) {
          Value* idx = c.remainder(s[0], i32c(c, 3));
          auto v = c.case_(idx, {[k](Builder&, const Values&) { return Values{k}; },
                                 [k](Builder& d, const Values&) { return Values{d.add(k, k)}; },
                                 [k](Builder& d, const Values&) { return Values{d.negate(k)}; }});
          return Values{c.add(s[0], i32c(c, 1)), c.add(s[1], v[0])};
        });
    Value* acc = r[1];
    Value* first = b.reshape(b.slice(acc, {0}, {1}, {1}), {});
    Value* pos = b.compare(first, b.scalar(0, DType::kF32), "GT");
    auto sel = b.if_(
        pos, [acc](Builder& c, const Values&) { return Values{c.multiply(acc, acc)}; },
        [acc](Builder& c, const Values&) { return Values{c.negate(acc)}; });
    Value* far = b.case_(i32c(b, 7),
                         {[k](Builder&, const Values&) { return Values{k}; },
                          [acc](Builder& d, const Values&) { return Values{d.add(acc, acc)}; }})[0];
    return Values{sel[0], far};
  };
  // i = 0..4 -> branches 0,1,2,0,1: acc = x + (1 + 2 - 1 + 1 + 2) k = x + 5k.
  auto out = cpu_equals_ref({f32({2}, {1, -20}), f32({2}, {1, 2})}, body);
  expect_equal(out[0], f32({2}, {36, 100}));  // acc = {6, -10}; acc0 > 0: acc²
  expect_equal(out[1], f32({2}, {12, -20}));  // index 7 runs the last branch: 2 acc
}

TEST(CpuRegions, CallInsideALoopBody) {
  auto m = std::make_shared<hlo::Module>();
  Type t = Type::tensor(DType::kF32, {3});
  hlo::Func* sq = m->add_func("square_plus", {t, t}, /*is_public=*/false);
  {
    Builder b(sq->body.get());
    b.func_return({b.add(b.multiply(sq->arg(0), sq->arg(0)), sq->arg(1))});
  }
  hlo::Func* f = m->add_func("main", {t, t});
  {
    Builder b(f->body.get());
    Value* y = f->arg(1);
    auto r = b.while_(
        {i32c(b, 0), f->arg(0)},
        [](Builder& c, const Values& s) { return Values{c.compare(s[0], i32c(c, 2), "LT")}; },
        [sq, y](Builder& c, const Values& s) {
          return Values{c.add(s[0], i32c(c, 1)), c.call(*sq, {s[1], y})[0]};
        });
    b.func_return({r[1]});
  }
  EXPECT_EQ(exec::cpu::plan_stats(*f).ref_steps, 0);
  EXPECT_EQ(exec::cpu::plan_stats(*f).calls_inlined, 1);  // the body runs square_plus's ops
  std::vector<Tensor> in = {f32({3}, {1, 2, -1}), f32({3}, {0, 1, 1})};
  std::vector<Tensor> want = run_module("ref", m, in);
  CheckMode check;
  std::vector<Tensor> got = run_module("cpu", m, in);
  expect_equal(got[0], want[0]);
  expect_equal(got[0], f32({3}, {1, 26, 5}));  // x² + y twice: 1 -> 1 -> 1; 2 -> 5 -> 26
}

// The planner inlines calls (hlo::inline_calls): a callee that calls another, its results read
// by a later op and, through the scope, by a loop body; a callee called twice. Every call is
// inlined (outer's two, then inner's in each copy), the results equal ref's, and
// NETSPEC_NO_INLINE=1 plans the calls as sub-plans with the same results.
TEST(CpuRegions, CallsAreInlinedIntoTheCallersPlan) {
  auto m = std::make_shared<hlo::Module>();
  Type t = Type::tensor(DType::kF32, {3});
  hlo::Func* inner = m->add_func("inner", {t}, /*is_public=*/false);
  {
    Builder b(inner->body.get());
    b.func_return({b.multiply(inner->arg(0), inner->arg(0))});
  }
  hlo::Func* outer = m->add_func("outer", {t, t}, /*is_public=*/false);
  {
    Builder b(outer->body.get());
    Value* sq = b.call(*inner, {outer->arg(0)})[0];
    b.func_return({b.add(sq, outer->arg(1)), b.subtract(sq, outer->arg(1))});
  }
  hlo::Func* f = m->add_func("main", {t, t});
  {
    Builder b(f->body.get());
    auto r = b.call(*outer, {f->arg(0), f->arg(1)});  // x² + y, x² - y
    Value* s = b.add(r[0], r[1]);                     // 2x²
    auto w = b.while_(
        {i32c(b, 0), s},
        [](Builder& c, const Values& v) { return Values{c.compare(v[0], i32c(c, 2), "LT")}; },
        [&](Builder& c, const Values& v) {  // acc += (x² - y) each turn, read from the scope
          return Values{c.add(v[0], i32c(c, 1)), c.add(v[1], r[1])};
        });
    Value* again = b.call(*outer, {w[1], f->arg(1)})[0];  // acc² + y
    b.func_return({again, r[0]});
  }
  EXPECT_EQ(exec::cpu::plan_stats(*f).calls_inlined, 4);  // outer twice, inner in each
  std::vector<Tensor> in = {f32({3}, {1, 2, -1}), f32({3}, {0, 1, 3})};
  std::vector<Tensor> want = run_module("ref", m, in);
  // acc = 2x² + 2(x² - y) = {4, 14, -2}; acc² + y = {16, 197, 7}; x² + y = {1, 5, 4}
  expect_equal(want[0], f32({3}, {16, 197, 7}));
  expect_equal(want[1], f32({3}, {1, 5, 4}));
  {
    CheckMode check;
    std::vector<Tensor> got = run_module("cpu", m, in);
    expect_equal(got[0], want[0]);
    expect_equal(got[1], want[1]);
  }
  ::setenv("NETSPEC_NO_INLINE", "1", 1);
  EXPECT_EQ(exec::cpu::plan_stats(*f).calls_inlined, 0);
  std::vector<Tensor> got = run_module("cpu", m, in);
  ::unsetenv("NETSPEC_NO_INLINE");
  expect_equal(got[0], want[0]);
  expect_equal(got[1], want[1]);
}

TEST(CpuRegions, DynamicSliceAndUpdateClampTheirStarts) {
  // Starts -1 and 5 clamp to 0 and dim - size; the update lands at the clamped place.
  BodyFn body = [](Builder& b, const Values& a) {
    Value* s0 = b.dynamic_slice(a[0], {i32c(b, -1), i32c(b, 5)}, {2, 2});
    Value* s1 = b.dynamic_slice(a[0], {i32c(b, 1), i32c(b, 1)}, {2, 3});
    Value* u = b.dynamic_update_slice(a[0], s0, {i32c(b, 9), i32c(b, 1)});
    return Values{s0, s1, u};
  };
  Tensor x = f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto out = cpu_equals_ref({x}, body);
  expect_equal(out[0], f32({2, 2}, {2, 3, 6, 7}));
  expect_equal(out[1], f32({2, 3}, {5, 6, 7, 9, 10, 11}));
  expect_equal(out[2], f32({3, 4}, {0, 1, 2, 3, 4, 2, 3, 7, 8, 6, 7, 11}));
}

// Updates whose trailing dims are whole are copied as one run per leading index: a [1, 2, 3]
// step of [4, 2, 3] (one run), a [2, 1, 3] block of [2, 4, 3] (runs of 3), a [2, 2, 2] block of
// [3, 4, 2] at (1, 2, 0) (runs of 4 spanning two rows of the last dims).
TEST(CpuRegions, DynamicUpdateSliceCopiesWholeTrailingDimsAsOneRun) {
  auto iota_f32 = [](Shape s, float from) {
    Tensor t(DType::kF32, s);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = from + float(i);
    return t;
  };
  BodyFn body = [](Builder& b, const Values& a) {
    Value* u0 = b.dynamic_update_slice(a[0], a[1], {i32c(b, 2), i32c(b, 0), i32c(b, 0)});
    Value* u1 = b.dynamic_update_slice(a[2], a[3], {i32c(b, 0), i32c(b, 3), i32c(b, 0)});
    Value* u2 = b.dynamic_update_slice(a[4], a[5], {i32c(b, 1), i32c(b, 2), i32c(b, 0)});
    return Values{u0, u1, u2};
  };
  auto out =
      cpu_equals_ref({iota_f32({4, 2, 3}, 0), iota_f32({1, 2, 3}, 100), iota_f32({2, 4, 3}, 0),
                      iota_f32({2, 1, 3}, 100), iota_f32({3, 4, 2}, 0), iota_f32({2, 2, 2}, 100)},
                     body);
  Tensor w0 = iota_f32({4, 2, 3}, 0), w1 = iota_f32({2, 4, 3}, 0), w2 = iota_f32({3, 4, 2}, 0);
  for (int i = 0; i < 6; ++i) w0.data<float>()[12 + i] = 100 + float(i);
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 3; ++j) w1.data<float>()[r * 12 + 9 + j] = 100 + float(r * 3 + j);
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 4; ++j) w2.data<float>()[(1 + r) * 8 + 4 + j] = 100 + float(r * 4 + j);
  expect_equal(out[0], w0);
  expect_equal(out[1], w1);
  expect_equal(out[2], w2);
}

// A loop writing row i of its carried accumulator (acc = dynamic_update_slice(acc, row·2 + i,
// i)) updates the loop state in place: one in-place value per body; a second loop that also
// returns the old accumulator in another slot, and one that reads it after the update, copy.
TEST(CpuRegions, LoopStateUpdatedInPlaceWhereNothingElseReadsIt) {
  auto loop = [](int variant) {
    return [variant](Builder& b, const Values& a) {
      auto r = b.while_(
          {i32c(b, 0), a[0], a[0]},
          [](Builder& c, const Values& s) { return Values{c.compare(s[0], i32c(c, 3), "LT")}; },
          [variant](Builder& c, const Values& s) {
            Value* row = c.dynamic_slice(s[1], {s[0], i32c(c, 0)}, {1, 4});
            Value* fi = c.broadcast_in_dim(c.convert(s[0], DType::kF32), {1, 4}, {});
            Value* upd = c.add(c.add(row, row), fi);
            Value* acc = c.dynamic_update_slice(s[1], upd, {s[0], i32c(c, 0)});
            Value* other = variant == 1 ? s[1] : s[2];  // 1: the old value leaves in slot 2
            if (variant == 2) other = c.add(s[1], s[2]);  // 2: read after the update
            return Values{c.add(s[0], i32c(c, 1)), acc, other};
          });
      return Values{r[1], r[2]};
    };
  };
  Tensor x = f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const Tensor want = f32({3, 4}, {0, 2, 4, 6, 9, 11, 13, 15, 18, 20, 22, 24});
  std::vector<int> inplace;
  for (int variant : {0, 1, 2}) {
    auto m = make_module({type_of(x)}, loop(variant));
    inplace.push_back(exec::cpu::plan_stats(*m->funcs[0]).inplace);
    auto out = cpu_equals_ref({x}, loop(variant));
    expect_equal(out[0], want, "variant " + std::to_string(variant));
  }
  EXPECT_EQ(inplace[0], inplace[1] + 1);  // the same body but for the slot-2 result
  EXPECT_GE(inplace[0], 1);
}

// A carried value computed elementwise from its old value (h = d ⊙ h + x, a fused group with a
// row sum: mamba's scan state) is written into its state slot in place: one more in-place value
// than a body that still reads the old h after computing the new one (variant 1, which copies).
TEST(CpuRegions, CarriedValueComputedFromItselfIsWrittenInPlace) {
  auto loop = [](int variant) {
    return [variant](Builder& b, const Values& a) {
      auto r = b.while_(
          {i32c(b, 0), a[0], a[1]},
          [](Builder& c, const Values& s) { return Values{c.compare(s[0], i32c(c, 3), "LT")}; },
          [&a, variant](Builder& c, const Values& s) {
            Value* h = c.add(c.multiply(c.exponential(a[1]), s[1]), a[0]);
            Value* rows = c.reduce(h, c.scalar(0, DType::kF32), {1}, hlo::OpKind::kAdd);
            Value* acc = c.add(s[2], c.broadcast_in_dim(rows, {2, 4}, {0}));
            if (variant == 1) acc = c.add(acc, s[1]);  // the old h read after the new one
            return Values{c.add(s[0], i32c(c, 1)), h, acc};
          });
      return Values{r[1], r[2]};
    };
  };
  Tensor x = f32({2, 4}, {0.5f, -1, 2, 0.25f, 1, 0, -0.5f, 3});
  Tensor d = f32({2, 4}, {-1, -0.5f, 0, -2, -0.25f, -1, -3, 0.5f});
  std::vector<int> inplace;
  for (int variant : {0, 1}) {
    auto m = make_module({type_of(x), type_of(d)}, loop(variant));
    inplace.push_back(exec::cpu::plan_stats(*m->funcs[0]).inplace);
    cpu_equals_ref({x, d}, loop(variant));
  }
  EXPECT_EQ(inplace[0], inplace[1] + 1);
}

// A loop whose initial state (a computed buffer, here a zero stack the body fills row by row)
// dies at the loop starts on that buffer in place; variant 1 also returns the initial value, so
// the loop copies it in; variant 2 passes the same value for two slots (both copy).
TEST(CpuRegions, LoopStartsOnItsDyingInitialValueInPlace) {
  auto loop = [](int variant) {
    return [variant](Builder& b, const Values& a) {
      Value* zeros = b.broadcast_in_dim(b.scalar(0, DType::kF32), {3, 4}, {});
      Value* start = b.add(zeros, b.broadcast_in_dim(b.scalar(1, DType::kF32), {3, 4}, {}));
      Value* second = variant == 2 ? start : a[0];
      auto r = b.while_(
          {i32c(b, 0), start, second},
          [](Builder& c, const Values& s) { return Values{c.compare(s[0], i32c(c, 3), "LT")}; },
          [&a](Builder& c, const Values& s) {
            Value* row = c.dynamic_slice(a[0], {s[0], i32c(c, 0)}, {1, 4});
            Value* old = c.dynamic_slice(s[1], {s[0], i32c(c, 0)}, {1, 4});
            Value* stack = c.dynamic_update_slice(s[1], c.add(row, old), {s[0], i32c(c, 0)});
            return Values{c.add(s[0], i32c(c, 1)), stack, c.add(s[2], s[2])};
          });
      if (variant == 1) return Values{r[1], r[2], start};
      return Values{r[1], r[2]};
    };
  };
  Tensor x = f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  std::vector<int> inplace;
  for (int variant : {0, 1, 2}) {
    auto m = make_module({type_of(x)}, loop(variant));
    inplace.push_back(exec::cpu::plan_stats(*m->funcs[0]).inplace);
    auto out = cpu_equals_ref({x}, loop(variant));
    Tensor want = x.clone();
    for (int64_t i = 0; i < want.numel(); ++i) want.data<float>()[i] += 1.0f;
    expect_equal(out[0], want, "variant " + std::to_string(variant));
  }
  EXPECT_EQ(inplace[0], inplace[1] + 1);
  EXPECT_EQ(inplace[0], inplace[2] + 1);
}

// A value passed as a loop's initial state that the body also reads (captured) must not become
// that state's slot: the state's writes would change what the body reads on later turns. Here
// c = x - y starts carry 2 and is read by the body every turn while carries 2 and 3 swap (the
// random programs of cpu_random_programs_test.cpp found it: the second turn read 0.5·(-c)).
// Variant 1 passes a copy of c instead, which the loop may take.
TEST(CpuRegions, LoopInitTheBodyAlsoReadsIsNotTakenAsItsState) {
  auto loop = [](int variant) {
    return [variant](Builder& b, const Values& a) {
      Value* c = b.subtract(a[0], a[1]);
      Value* init = variant == 1 ? b.multiply(c, b.broadcast_in_dim(b.scalar(1, DType::kF32), {3}, {})) : c;
      auto r = b.while_(
          {i32c(b, 0), a[0], b.negate(a[0]), init},
          [](Builder& d, const Values& s) { return Values{d.compare(s[0], i32c(d, 3), "LT")}; },
          [c](Builder& d, const Values& s) {
            Value* half = d.broadcast_in_dim(d.scalar(0.5, DType::kF32), {3}, {});
            return Values{d.add(s[0], i32c(d, 1)), d.add(d.multiply(s[1], half), c), s[3],
                          d.multiply(s[2], half)};
          });
      return Values{r[1], r[2], r[3]};
    };
  };
  Tensor x = f32({3}, {1, -2, 0.5}), y = f32({3}, {0.25, 1, -1});
  for (int variant : {0, 1}) {
    auto out = cpu_equals_ref({x, y}, loop(variant));
    // x_{t+1} = x_t / 2 + c with c = x - y: after 3 turns x/8 + c·(1 + 1/2 + 1/4).
    std::vector<double> want;
    for (int i = 0; i < 3; ++i) {
      const double xi = x.as_double(i), ci = xi - y.as_double(i);
      want.push_back(xi / 8 + ci * 1.75);
    }
    expect_equal(out[0], f32({3}, want), "variant " + std::to_string(variant));
  }
}

// A zero stack a counted loop fills row by row (the states a scan keeps) is not filled with
// zeros first (its slot starts with whatever the arena held); with 3 turns of a 4-row stack the
// last row keeps its zeros, so there the fill runs. (A fresh arena holds zeros anyway: the plan's
// count is what tells the two apart.)
TEST(CpuRegions, StackTheLoopOverwritesWholeIsNotFilledFirst) {
  auto loop = [](int64_t turns) {
    return [turns](Builder& b, const Values& a) {
      Value* zeros = b.broadcast_in_dim(b.scalar(0, DType::kF32), {4, 3}, {});
      auto r = b.while_(
          {i32c(b, 0), zeros, a[0]},
          [turns](Builder& c, const Values& s) {
            return Values{c.compare(s[0], i32c(c, turns), "LT")};
          },
          [](Builder& c, const Values& s) {
            Value* h = c.add(c.multiply(s[2], s[2]), s[2]);
            return Values{c.add(s[0], i32c(c, 1)),
                          c.dynamic_update_slice(s[1], h, {s[0], i32c(c, 0)}), h};
          });
      return Values{r[1]};
    };
  };
  Tensor x = f32({1, 3}, {0.5f, -1, 0.25f});
  for (int64_t turns : {4, 3}) {
    auto m = make_module({type_of(x)}, loop(turns));
    EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0]).unfilled_states, turns == 4 ? 1 : 0);
    auto out = cpu_equals_ref({x}, loop(turns));
    // column 0, x = 0.5: rows h = x² + x: 0.75, 1.3125, 3.03515625, then 12.2...
    EXPECT_EQ(out[0].data<float>()[0], 0.75f);
    EXPECT_EQ(out[0].data<float>()[6], 3.03515625f);
    if (turns == 3) {
      EXPECT_EQ(out[0].data<float>()[9], 0.0f);
    }
  }
}

// The same stack, but a product reads the zeros before the loop starts on them: the fill must
// run (session 36 skipped it, so from the second run on the product read the last run's stack:
// the arena slot is reused).
TEST(CpuRegions, StackAlsoReadBeforeTheLoopIsStillFilled) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* zeros = b.broadcast_in_dim(b.scalar(0, DType::kF32), {3, 4}, {});
    hlo::DotDims d;
    d.lhs_contracting = {0}, d.rhs_contracting = {0};
    Value* early = b.dot_general(zeros, a[0], d);  // [4, 4] of zeros
    auto r = b.while_(
        {i32c(b, 0), zeros},
        [](Builder& c, const Values& s) { return Values{c.compare(s[0], i32c(c, 3), "LT")}; },
        [&a](Builder& c, const Values& s) {
          Value* row = c.dynamic_slice(a[0], {s[0], i32c(c, 0)}, {1, 4});
          return Values{c.add(s[0], i32c(c, 1)),
                        c.dynamic_update_slice(s[1], c.multiply(row, row), {s[0], i32c(c, 0)})};
        });
    return Values{early, r[1]};
  };
  Tensor x = f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto m = make_module({type_of(x)}, body);
  EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0]).unfilled_states, 0);
  auto cpu = exec::make_backend("cpu")->load(m);
  for (int run = 0; run < 3; ++run) {
    const std::vector<Tensor> got = cpu->run("main", {x});
    expect_equal(got[0], f32({4, 4}, std::vector<double>(16, 0.0)), "run " + std::to_string(run));
    EXPECT_EQ(got[1].data<float>()[11], 121.0f) << "run " << run;
  }
}

}  // namespace
}  // namespace netspec::testing
