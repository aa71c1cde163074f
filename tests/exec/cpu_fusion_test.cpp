// Elementwise fusion in the cpu executor: chains of f32 elementwise ops with scalar, row and
// column broadcasts run as one kernel and give the ref executor's values; a group is split where
// a non-fusable op reads one of its values; masks (i1) cross group boundaries; check mode runs
// each group's ops on the ref kernels and agrees.
#include <cmath>
#include <random>

#include "exec/cpu/cpu_backend.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

Tensor rnd(Shape s, uint32_t seed, double lo = -2, double hi = 2) {
  return random_f32(s, seed, lo, hi);
}

// An Adam-like update over a [37, 1000] tensor (tiles do not divide it) with scalar broadcasts of
// arguments and constants, a row broadcast (bias [1000]) and a column broadcast ([37]).
Values adam_like(Builder& b, const Values& a) {
  Shape s{37, 1000};
  auto bc = [&](Value* x) { return b.broadcast_in_dim(x, s, {}); };
  Value* g = b.add(a[0], b.broadcast_in_dim(a[3], s, {1}));     // + row bias
  Value* gc = b.multiply(g, b.broadcast_in_dim(a[4], s, {0}));  // * per-row scale
  Value* m = b.add(b.multiply(bc(b.constant_splat(0.9, Type::tensor(DType::kF32, {}))), a[1]),
                   b.multiply(bc(b.constant_splat(0.1, Type::tensor(DType::kF32, {}))), gc));
  Value* v = b.add(b.multiply(bc(b.constant_splat(0.999, Type::tensor(DType::kF32, {}))), a[2]),
                   b.multiply(gc, gc));
  Value* upd =
      b.divide(m, b.add(b.sqrt(v), bc(b.constant_splat(1e-8, Type::tensor(DType::kF32, {})))));
  Value* w = b.subtract(a[0], b.multiply(bc(a[5]), upd));
  Value* mask = b.compare(w, b.exponential(b.negate(b.abs(upd))), "GT");
  Value* sel = b.select(mask, b.log(b.add(v, bc(a[5]))), b.tanh(w));
  return Values{w, m, v, sel, mask};
}

std::vector<Tensor> adam_inputs() {
  return {rnd({37, 1000}, 1), rnd({37, 1000}, 2), rnd({37, 1000}, 3, 0, 1),
          rnd({1000}, 4),     rnd({37}, 5),       f32({}, {0.01})};
}

// Fused groups interpreted (kernels/fusion_jit.cpp's generated code off) while in scope.
struct JitOff {
  JitOff() { ::setenv("NETSPEC_FUSION_JIT", "0", 1); }
  ~JitOff() { ::unsetenv("NETSPEC_FUSION_JIT"); }
};

TEST(CpuFusion, AdamLikeChainMatchesRefAndFusesIntoFewSteps) {
  std::vector<Tensor> in = adam_inputs();
  std::vector<Type> ts;
  for (const Tensor& t : in) ts.push_back(type_of(t));
  auto st = cpu_plan_stats(ts, adam_like);
  // Constants fold at plan time; every elementwise op and broadcast joins one group.
  EXPECT_EQ(st.steps, 1) << st.fallback_ops;
  EXPECT_EQ(st.fast_steps, 1);
  auto want = run_fn("ref", in, adam_like);
  auto got = run_fn("cpu", in, adam_like);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < 4; ++i) expect_near(got[i], want[i], 1e-6, 1e-6);
  expect_equal(got[4], want[4], "mask");
}

TEST(CpuFusion, CheckModeComparesEveryGroupWithRef) {
  std::vector<Tensor> in = adam_inputs();
  ::setenv("NETSPEC_CPU_CHECK", "1", 1);
  std::vector<Tensor> got;
  EXPECT_NO_THROW(got = run_fn("cpu", in, adam_like));
  ::unsetenv("NETSPEC_CPU_CHECK");
  EXPECT_EQ(got.size(), 5u);
}

TEST(CpuFusion, NonFusableReaderSplitsTheChain) {
  // t = x * y is read by a dot before u = t + x: t's group must run before the dot, so u cannot
  // join it; the results still equal ref.
  BodyFn body = [](Builder& b, const Values& a) {
    Value* t = b.multiply(b.exponential(a[0]), a[1]);
    hlo::DotDims d;
    d.lhs_contracting = {1};
    d.rhs_contracting = {1};
    Value* p = b.dot_general(t, a[1], d);  // [64, 64]
    Value* u = b.add(b.negate(t), a[0]);
    Value* q = b.multiply(p, p);
    return Values{u, q, t};
  };
  std::vector<Tensor> in{rnd({64, 96}, 7), rnd({64, 96}, 8)};
  auto st = cpu_plan_stats({type_of(in[0]), type_of(in[1])}, body);
  EXPECT_EQ(st.steps, 4);  // {exp, mul}, dot, {neg, add}, mul
  auto want = run_fn("ref", in, body);
  auto got = run_fn("cpu", in, body);
  for (size_t i = 0; i < want.size(); ++i) expect_near(got[i], want[i], 1e-4, 1e-5);  // dot order
}

TEST(CpuFusion, MaxReluAndMaskBackwardMatchRef) {
  // relu forward and its VJP as the emitter writes them: max(x + b, 0); select(x + b >= 0, dy, 0).
  BodyFn body = [](Builder& b, const Values& a) {
    Shape s{128, 40};
    Value* zero = b.broadcast_in_dim(b.constant_splat(0, Type::tensor(DType::kF32, {})), s, {});
    Value* h = b.add(a[0], b.broadcast_in_dim(a[1], s, {1}));
    Value* y = b.maximum(h, zero);
    Value* dx = b.select(b.compare(h, zero, "GE"), a[2], zero);
    return Values{y, dx};
  };
  std::vector<Tensor> in{rnd({128, 40}, 9), rnd({40}, 10), rnd({128, 40}, 11)};
  auto want = run_fn("ref", in, body);
  auto got = run_fn("cpu", in, body);
  expect_equal(got[0], want[0], "relu");
  expect_equal(got[1], want[1], "relu vjp");
}

// Broadcasts whose kept dims form two ordered runs fuse: [B, N] over the middle dim of
// [B, D, N] (Mamba's B_t and C_t over the channels), [A, C] into [A, X, C, Y], beside a one-run
// [B, D] over N; tiles (kTile) do not divide the outer stretches. A transposing broadcast
// ([D, B] read as [B, D]) stays a step of its own; all equal ref.
TEST(CpuFusion, TwoRunBroadcastsJoinTheGroup) {
  BodyFn body = [](Builder& b, const Values& a) {
    Shape s{7, 301, 5};
    Value* y = b.multiply(b.add(a[0], b.broadcast_in_dim(a[1], s, {0, 2})),
                          b.broadcast_in_dim(a[2], s, {0, 1}));
    Shape s4{3, 11, 4, 37};
    Value* z = b.exponential(b.broadcast_in_dim(a[3], s4, {0, 2}));
    Value* w = b.add(a[0], b.broadcast_in_dim(a[4], s, {1, 0}));
    return Values{y, b.add(z, b.broadcast_in_dim(a[5], s4, {1, 3})), w};
  };
  std::vector<Tensor> in{rnd({7, 301, 5}, 21), rnd({7, 5}, 22),   rnd({7, 301}, 23),
                         rnd({3, 4}, 24),      rnd({301, 7}, 25), rnd({11, 37}, 26)};
  std::vector<Type> ts;
  for (const Tensor& t : in) ts.push_back(type_of(t));
  auto st = cpu_plan_stats(ts, body);
  EXPECT_EQ(st.steps, 4) << st.fallback_ops;  // y's group, z's group, w's broadcast, w's add
  auto want = run_fn("ref", in, body);
  auto got = run_fn("cpu", in, body);
  for (size_t i = 0; i < want.size(); ++i) expect_near(got[i], want[i], 1e-6, 1e-6);
}

// Per-row values spread over a short last dim of 16 or 8 (Mamba's Δ and x over its state dim)
// fill whole runs per tile; a last dim of 12 takes the general path; [B, D] over the last dim of
// [B, D, 16] with a domain (7 * 301 * 16) that the tiles do not divide. Bit for bit with ref.
TEST(CpuFusion, ShortRunBroadcastsEqualRef) {
  BodyFn body = [](Builder& b, const Values& a) {
    Value* y = b.multiply(a[0], b.exponential(b.broadcast_in_dim(a[1], {7, 301, 16}, {0, 1})));
    Value* z = b.add(a[2], b.broadcast_in_dim(a[3], {9, 64, 8}, {0, 1}));
    Value* w = b.subtract(a[4], b.broadcast_in_dim(a[5], {5, 33, 12}, {0, 1}));
    return Values{y, z, w};
  };
  std::vector<Tensor> in{rnd({7, 301, 16}, 31), rnd({7, 301}, 32), rnd({9, 64, 8}, 33),
                         rnd({9, 64}, 34),      rnd({5, 33, 12}, 35), rnd({5, 33}, 36)};
  std::vector<Type> ts;
  for (const Tensor& t : in) ts.push_back(type_of(t));
  EXPECT_EQ(cpu_plan_stats(ts, body).steps, 3);  // one group per output, broadcasts inside
  auto want = run_fn("ref", in, body);
  auto got = run_fn("cpu", in, body);
  for (size_t i = 0; i < want.size(); ++i) expect_near(got[i], want[i], 1e-6, 1e-6);
}

// A group over more than 32 MiB (fusion.cpp's kStreamBytes) writes its outputs with streaming
// stores from the tile slots and prefetches its inputs; the domain (8.4M elements) is not a
// multiple of the tile, one output is also the input of another group. Bit for bit with ref.
TEST(CpuFusion, LargeGroupsStreamTheirOutputsAndEqualRef) {
  BodyFn body = [](Builder& b, const Values& a) {
    const Shape s{2, 4, 1024, 1025};
    Value* y = b.add(b.multiply(a[0], b.broadcast_in_dim(a[1], s, {1})), a[0]);
    Value* zero = b.broadcast_in_dim(b.constant_splat(0, Type::tensor(DType::kF32, {})), s, {});
    Value* r = b.maximum(y, zero);
    return Values{r, b.reduce(r, b.scalar(0.0, DType::kF32), {0, 1, 2, 3}, hlo::OpKind::kMaximum), y};
  };
  std::vector<Tensor> in{rnd({2, 4, 1024, 1025}, 41), rnd({4}, 42)};
  auto want = run_fn("ref", in, body);
  auto got = run_fn("cpu", in, body);
  for (size_t i = 0; i < want.size(); ++i) expect_equal(got[i], want[i]);
}

TEST(CpuFusion, ClampAndMaskLogicJoinTheGroup) {
  // clamp with splat bounds (scalar and full-tensor), its VJP's masks combined by or/and/not,
  // and an i1 argument: one group, the ref values bit for bit (NaN and the bounds included).
  BodyFn body = [](Builder& b, const Values& a) {
    Shape s{37, 130};
    auto splat = [&](double v) {
      return b.broadcast_in_dim(b.constant_splat(v, Type::tensor(DType::kF32, {})), s, {});
    };
    Value* x = b.multiply(a[0], splat(3.0));
    Value* c = b.clamp(splat(-4), x, splat(4));
    Value* c2 = b.clamp(a[1], x, splat(1));  // lo a full tensor
    Value* out = b.or_(b.compare(x, splat(-4), "LT"), b.compare(x, splat(4), "GT"));
    Value* in = b.and_(b.not_(out), a[2]);
    Value* dx = b.select(in, a[1], splat(0));
    return Values{c, c2, dx, out};
  };
  std::vector<Tensor> in{rnd({37, 130}, 12), rnd({37, 130}, 13), rnd({37, 130}, 14)};
  in[0].data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  in[0].data<float>()[6] = 4.f / 3.f;
  {  // a[2]: a random i1 mask
    Tensor m(DType::kI1, {37, 130});
    for (int64_t i = 0; i < m.numel(); ++i) m.data<bool>()[i] = (i * 7919) % 3 != 0;
    in[2] = std::move(m);
  }
  std::vector<Type> ts;
  for (const Tensor& t : in) ts.push_back(type_of(t));
  auto st = cpu_plan_stats(ts, body);
  EXPECT_EQ(st.steps, 1) << st.fallback_ops;
  auto want = run_fn("ref", in, body);
  auto got = run_fn("cpu", in, body);
  const char* names[] = {"clamp", "clamp lo tensor", "masked select", "or mask"};
  for (size_t i = 0; i < want.size(); ++i) expect_equal(got[i], want[i], names[i]);
}

TEST(CpuFusion, OffSwitchGivesTheSameValues) {
  std::vector<Tensor> in = adam_inputs();
  auto fused = run_fn("cpu", in, adam_like);
  ::setenv("NETSPEC_NO_FUSION", "1", 1);
  auto plain = run_fn("cpu", in, adam_like);
  ::unsetenv("NETSPEC_NO_FUSION");
  for (size_t i = 0; i < fused.size(); ++i) expect_equal(fused[i], plain[i], std::to_string(i));
}

// Pairs of binary ops run as one pass (fusion.cpp chain_pairs: g's multiply by the row scale
// after the bias add, the moments' `β·m + (1-β)·g`, ...) give the unchained values bit for bit:
// a multiply feeding an add is not contracted into an FMA. NETSPEC_FUSED_CHAINS=0 turns it off.
TEST(CpuFusion, ChainedPairsEqualUnchainedBitForBit) {
  JitOff interpreted;  // chained pairs are the interpreter's (generated code needs none)
  std::vector<Tensor> in = adam_inputs();
  std::vector<Type> ts;
  for (const Tensor& t : in) ts.push_back(type_of(t));
  EXPECT_GE(cpu_plan_stats(ts, adam_like).fused_chains, 3);
  auto chained = run_fn("cpu", in, adam_like);
  ::setenv("NETSPEC_FUSED_CHAINS", "0", 1);
  EXPECT_EQ(cpu_plan_stats(ts, adam_like).fused_chains, 0);
  auto plain = run_fn("cpu", in, adam_like);
  ::unsetenv("NETSPEC_FUSED_CHAINS");
  for (size_t i = 0; i < chained.size(); ++i)
    expect_equal(chained[i], plain[i], std::to_string(i));
}

// Broadcasts read in place by their one binary reader (fusion_operands.cpp fold_broadcasts): runs
// of 16 and 8, long periods (592, 348) and short ones (16, 8), a two-run [B, N] over [B, D, N],
// runs of 12 (the general loop), on operand a of non-commutative ops and on b; a broadcast read
// twice stays a slot. maximum / minimum between them keep chain_pairs off these ops. Domains the tiles
// do not divide. The same bits as with the broadcasts materialised (NETSPEC_FUSED_BCAST=0) and
// as ref.
TEST(CpuFusion, FoldedBroadcastsEqualMaterialisedBitForBit) {
  JitOff interpreted;  // folded broadcasts are the interpreter's
  BodyFn body = [](Builder& b, const Values& a) {
    const Shape s{3, 37, 16}, s8{5, 13, 8}, s5{4, 29, 12};
    Value* v = b.subtract(b.broadcast_in_dim(a[1], s, {0, 1}), a[0]);  // runs of 16, on a
    v = b.maximum(v, b.broadcast_in_dim(a[2], s, {1, 2}));             // period 592, on b
    v = b.divide(b.broadcast_in_dim(a[3], s, {0, 2}), v);              // two runs, on a
    v = b.minimum(v, b.broadcast_in_dim(a[4], s, {2}));                // period 16, on b
    Value* twice = b.broadcast_in_dim(a[11], s, {1});
    v = b.maximum(b.multiply(v, twice), twice);                        // read twice: a slot
    Value* w = b.subtract(a[5], b.broadcast_in_dim(a[6], s8, {0, 1}));  // runs of 8, on b
    w = b.maximum(b.broadcast_in_dim(a[7], s8, {2}), w);                // period 8, on a
    Value* z = b.divide(b.broadcast_in_dim(a[9], s5, {0, 1}), a[8]);    // runs of 12, on a
    return Values{v, w, b.maximum(z, b.broadcast_in_dim(a[10], s5, {1, 2}))};  // period 348
  };
  std::vector<Tensor> in{rnd({3, 37, 16}, 51), rnd({3, 37}, 52),    rnd({37, 16}, 53),
                         rnd({3, 16}, 54),     rnd({16}, 55),       rnd({5, 13, 8}, 56),
                         rnd({5, 13}, 57),     rnd({8}, 58),        rnd({4, 29, 12}, 59),
                         rnd({4, 29}, 60),     rnd({29, 12}, 61),   rnd({37}, 62)};
  std::vector<Type> ts;
  for (const Tensor& t : in) ts.push_back(type_of(t));
  EXPECT_EQ(cpu_plan_stats(ts, body).fused_bcasts, 8);
  auto folded = run_fn("cpu", in, body);
  ::setenv("NETSPEC_FUSED_BCAST", "0", 1);
  EXPECT_EQ(cpu_plan_stats(ts, body).fused_bcasts, 0);
  auto plain = run_fn("cpu", in, body);
  ::unsetenv("NETSPEC_FUSED_BCAST");
  auto want = run_fn("ref", in, body);
  for (size_t i = 0; i < folded.size(); ++i) {
    expect_equal(folded[i], plain[i], std::to_string(i));
    expect_equal(folded[i], want[i], "ref " + std::to_string(i));
  }
}

}  // namespace
}  // namespace netspec::testing
