// The cpu executor's planner: bounded arena on long chains (buffer reuse and in-place), in-place
// legality when a value is used again, views (reshape) sharing storage, results not aliasing the
// arena across runs, ref fallbacks, replicated runs, and the thread pool.
#include <atomic>
#include <thread>
#include <numeric>

#include "core/thread_pool.h"
#include "exec/cpu/cpu_backend.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::OpKind;

// These tests count the planner's own buffers and in-place reuse, so elementwise fusion (which
// would merge the chains into one kernel; see cpu_fusion_test.cpp) is off while they plan.
struct NoFusion {
  NoFusion() { ::setenv("NETSPEC_NO_FUSION", "1", 1); }
  ~NoFusion() { ::unsetenv("NETSPEC_NO_FUSION"); }
};

Tensor iota_f32(int64_t n, double scale) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = scale * static_cast<double>(i);
  return f32({n}, v);
}

TEST(CpuPlanner, ChainOfHundredAddsRunsInBoundedArena) {
  NoFusion no_fusion;
  const int64_t n = 256;
  BodyFn body = [](Builder& b, const Values& a) {
    Value* x = b.multiply(a[0], a[1]);  // first result lives in the arena
    for (int i = 0; i < 100; ++i) x = b.add(x, a[1]);
    return Values{b.negate(x)};
  };
  Type t = Type::tensor(DType::kF32, {n});
  auto st = cpu_plan_stats({t, t}, body);
  EXPECT_EQ(st.steps, 102);
  EXPECT_EQ(st.fast_steps, 102);
  EXPECT_EQ(st.ref_steps, 0);
  EXPECT_GE(st.inplace, 100);
  EXPECT_LE(st.arena_bytes, 2u * n * 4);  // one or two live buffers, not 101
  EXPECT_EQ(st.value_bytes, 102u * n * 4);
  Tensor x = iota_f32(n, 1.0), y = f32({n}, std::vector<double>(n, 0.5));
  Tensor r = run_fn("cpu", {x, y}, body).at(0);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(r.data<float>()[i], -(0.5f * i + 50.0f)) << i;
}

TEST(CpuPlanner, InPlaceOnlyWhenOperandDies) {
  NoFusion no_fusion;
  // t = -x; u = t + t (t still needed); v = u * t; w = exp(v) (v dies: in place)
  BodyFn body = [](Builder& b, const Values& a) {
    Value* t = b.negate(a[0]);
    Value* u = b.add(t, t);
    Value* v = b.multiply(u, t);
    Value* w = b.subtract(v, u);
    return Values{w, t};
  };
  Tensor x = f32({4}, {1, 2, -3, 0.5});
  for (const char* be : {"ref", "cpu"}) {
    auto r = run_fn(be, {x}, body);
    // t = -x, u = -2x, v = 2x^2, w = 2x^2 + 2x
    expect_equal(r.at(0), f32({4}, {4, 12, 12, 1.5}), be);
    expect_equal(r.at(1), f32({4}, {-1, -2, 3, -0.5}), be);
  }
  auto st = cpu_plan_stats({type_of(x)}, body);
  EXPECT_EQ(st.inplace, 1);  // only w may reuse v's buffer (u and t are read later or returned)
}

TEST(CpuPlanner, ReshapeViewKeepsItsBufferAlive) {
  // r = reshape(t); s = t * 3 (t's last direct use; r still live) ; out = r + reshape(s)
  BodyFn body = [](Builder& b, const Values& a) {
    Value* t = b.exponential(a[0]);
    Value* r = b.reshape(t, {2, 2});
    Value* s = b.multiply(t, t);
    Value* s2 = b.reshape(s, {2, 2});
    return Values{b.add(r, s2)};
  };
  Tensor x = f32({4}, {0, 1, 2, -1});
  Tensor want = run_fn("ref", {x}, body).at(0);
  Tensor got = run_fn("cpu", {x}, body).at(0);
  expect_equal(got, want);
  auto st = cpu_plan_stats({type_of(x)}, body);
  EXPECT_EQ(st.views, 2);
  EXPECT_EQ(st.inplace, 1);  // only the final add (into s's buffer)
}

// Regression: a reshape of a reshape (GAP's [N,C] -> [N,C,1,1] -> [N,C] before a dense layer)
// did not inherit its root's arena buffer, so the root's liveness ended at the second reshape
// and a later buffer (here exp(y)) was placed over it while the double view was still read.
TEST(CpuPlanner, ViewOfViewKeepsItsRootBufferAlive) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* t = b.multiply(a[0], a[0]);  // arena buffer (not a result)
    Value* v1 = b.reshape(t, {2, 2, 1, 1});
    Value* v2 = b.reshape(v1, {2, 2});  // t's buffer must live until v2's last use
    Value* e = b.negate(a[1]);          // a new buffer, allocated while v2 is live
    return Values{b.add(b.transpose(v2, {1, 0}), e)};
  };
  Tensor x = f64({2, 2}, {1, 2, 3, 4}), y = f64({2, 2}, {10, 20, 30, 40});
  // (x^2)ᵀ - y = {1-10, 9-20, 4-30, 16-40}
  expect_equal(run_fn("cpu", {x, y}, body).at(0), f64({2, 2}, {-9, -11, -26, -24}));
  auto st = cpu_plan_stats({type_of(x), type_of(y)}, body);
  EXPECT_EQ(st.views, 2);
  EXPECT_EQ(st.arena_bytes, 2u * 64);  // t and -y live together (the add reuses tᵀ's buffer)
}

// The same bug seen through dot_general's f64 scratch: the transposed rhs was copied into
// scratch placed over the lhs (a double reshape of an arena value), so the forward of
// globalAvgPool -> flatten -> dense computed garbage and every BN/GAP net failed gradcheck.
TEST(CpuPlanner, DotScratchDoesNotOverwriteADoubleViewOperand) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* t = b.multiply(a[0], a[0]);
    Value* v = b.reshape(b.reshape(t, {2, 2, 1, 1}), {2, 2});
    hlo::DotDims d;
    d.lhs_contracting = {1};
    d.rhs_contracting = {1};  // x · wᵀ: the f64 kernel copies w transposed into scratch
    return Values{b.dot_general(v, a[1], d)};
  };
  Tensor x = f64({2, 2}, {1, 2, 3, 4}), w = f64({2, 2}, {1, 0, 1, 1});
  // t = {{1, 4}, {9, 16}}; t · wᵀ = {{1, 5}, {9, 25}}
  Tensor want = f64({2, 2}, {1, 5, 9, 25});
  expect_equal(run_fn("ref", {x, w}, body).at(0), want, "ref");
  expect_equal(run_fn("cpu", {x, w}, body).at(0), want, "cpu");
}

// NETSPEC_CPU_CHECK=1 runs each fast step beside its ref kernel and checks that no operand was
// overwritten; on a correct plan (in place, views, scratch) it must stay silent.
TEST(CpuPlanner, CheckModeAcceptsACorrectPlan) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* t = b.exponential(a[0]);
    Value* v = b.reshape(b.reshape(t, {2, 2, 1, 1}), {2, 2});
    hlo::DotDims d;
    d.lhs_contracting = {1};
    d.rhs_contracting = {1};
    Value* p = b.dot_general(v, a[0], d);
    return Values{b.add(b.negate(p), p)};  // in place into -p's buffer
  };
  Tensor x = f64({2, 2}, {0, 1, -1, 2});
  ::setenv("NETSPEC_CPU_CHECK", "1", 1);
  std::vector<Tensor> r;
  EXPECT_NO_THROW(r = run_fn("cpu", {x}, body));
  ::unsetenv("NETSPEC_CPU_CHECK");
  ASSERT_EQ(r.size(), 1u);
  expect_equal(r[0], f64({2, 2}, {0, 0, 0, 0}));
}

TEST(CpuPlanner, ResultsDoNotAliasTheArenaAcrossRuns) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* t = b.add(a[0], a[0]);
    Value* u = b.multiply(t, t);
    return Values{u, b.reshape(u, {2, 1}), a[0], t};
  };
  Type ty = Type::tensor(DType::kF32, {2});
  auto exe = exec::make_backend("cpu")->load(make_module({ty}, body));
  Tensor x1 = f32({2}, {1, 2});
  auto r1 = exe->run("main", {x1});
  auto r2 = exe->run("main", {f32({2}, {3, 4})});
  expect_equal(r1[0], f32({2}, {4, 16}));
  expect_equal(r1[1], f32({2, 1}, {4, 16}));
  expect_equal(r1[2], x1);
  expect_equal(r1[3], f32({2}, {2, 4}));
  expect_equal(r2[0], f32({2}, {36, 64}));
  expect_equal(r2[3], f32({2}, {6, 8}));
  EXPECT_NE(r1[0].raw(), r2[0].raw());
}

TEST(CpuPlanner, FallsBackToRefKernelsAndReportsThem) {
  // reduce_precision has no fast path: it runs on the ref kernel; remainder and add run on the
  // cpu kernels of the scalar table.
  BodyFn body = [](Builder& b, const Values& a) {
    Value* r = b.remainder(a[0], a[1]);
    Value* f = b.reduce_precision(b.convert(r, DType::kF32), 8, 7);  // bf16 rounding
    return Values{b.add(r, a[1]), f};
  };
  Tensor x = i32({3}, {7, -7, 5}), y = i32({3}, {3, 3, 0x7fffffff});
  auto st = cpu_plan_stats({type_of(x), type_of(y)}, body);
  EXPECT_EQ(st.ref_steps, 1);
  EXPECT_EQ(st.fallback_ops, "reduce_precision");
  // 7 % 3 = 1, -7 % 3 = -1 (sign of the dividend), 5 % big = 5; then + y wraps for the last.
  auto out = run_fn("cpu", {x, y}, body);
  expect_equal(out.at(0), i32({3}, {4, 2, static_cast<int64_t>(int32_t(0x80000004u))}));
  expect_equal(out.at(1), f32({3}, {1, -1, 5}));
}

TEST(CpuPlanner, WhileRegionSeesPlannedValues) {
  // while (i < 3) { acc = acc * k } with k defined outside the loop by a fast kernel.
  BodyFn body = [](Builder& b, const Values& a) {
    Value* k = b.add(a[1], a[1]);  // 2k, captured by the body
    auto res = b.while_(
        {b.scalar(0, DType::kI32), a[0]},
        [](Builder& c, const Values& s) {
          return Values{c.compare(s[0], c.scalar(3, DType::kI32), "LT")};
        },
        [k](Builder& c, const Values& s) {
          return Values{c.add(s[0], c.scalar(1, DType::kI32)), c.multiply(s[1], k)};
        });
    return Values{res[1]};
  };
  Tensor x = f32({2}, {1, -2}), k = f32({2}, {1, 0.5});
  expect_equal(run_fn("cpu", {x, k}, body).at(0), f32({2}, {8, -2}));
}

TEST(CpuPlanner, ReplicatedAllReduceMeanEqualsConcatenatedBatch) {
  // Per replica: mean over its half of the batch, all_reduce(sum) / 2 == mean over all rows.
  BodyFn body = [](Builder& b, const Values& a) {
    Value* s = b.reduce(a[0], b.scalar(0, DType::kF32), {0}, OpKind::kAdd);
    Value* m = b.divide(s, b.constant_splat(2, Type::tensor(DType::kF32, {3})));
    Value* all = b.all_reduce({m}, {}, OpKind::kAdd)[0];
    return Values{b.divide(all, b.constant_splat(2, Type::tensor(DType::kF32, {3})))};
  };
  Type ty = Type::tensor(DType::kF32, {2, 3});
  auto exe = exec::make_backend("cpu")->load(make_module({ty}, body));
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6}), c = f32({2, 3}, {7, 8, 9, 10, 11, 12});
  auto out = exe->run_replicated("main", {{a}, {c}});
  ASSERT_EQ(out.size(), 2u);
  // Column means over all four rows: (1+4+7+10)/4 = 5.5, 6.5, 7.5.
  for (auto& r : out) expect_equal(r.at(0), f32({3}, {5.5, 6.5, 7.5}));
}

TEST(CpuThreadPool, CoversEveryIndexOnceAndRethrows) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(10007);
  for (int rep = 0; rep < 50; ++rep)
    pool.parallel_for(10007, 100, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
    });
  for (auto& h : hits) ASSERT_EQ(h.load(), 50);
  EXPECT_THROW(pool.parallel_for(1000, 1,
                                 [](int64_t b, int64_t) {
                                   if (b > 0) throw Error("boom");
                                 }),
               Error);
  // Nested calls run inline instead of deadlocking.
  std::atomic<int64_t> sum{0};
  pool.parallel_for(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      pool.parallel_for(4, 1, [&](int64_t lo, int64_t hi) { sum += hi - lo; });
  });
  EXPECT_EQ(sum.load(), 32);
}

// On libgomp's threads (the default pool) chunk c runs on team thread c every time, chunk 0 on
// the caller: a thread keeps its part of each tensor from op to op (thread_pool.cpp run_openmp).
TEST(CpuThreadPool, EachChunkStaysOnItsThread) {
  for (const char* v : {"NETSPEC_POOL", "NETSPEC_POOL_DYNAMIC"})
    if (std::getenv(v)) GTEST_SKIP() << v << " is set";
  ThreadPool pool(3);
  std::vector<std::thread::id> first(3);
  for (int rep = 0; rep < 20; ++rep) {
    std::vector<std::thread::id> ran(3);
    pool.parallel_for(3000, 1, [&](int64_t b, int64_t) { ran[static_cast<size_t>(b / 1000)] = std::this_thread::get_id(); });
    if (rep == 0) first = ran;
    for (size_t c = 0; c < 3; ++c) EXPECT_EQ(ran[c], first[c]) << "chunk " << c << " rep " << rep;
  }
  EXPECT_EQ(first[0], std::this_thread::get_id());
  EXPECT_NE(first[1], first[0]);
  EXPECT_NE(first[2], first[1]);
}

}  // namespace
}  // namespace netspec::testing
