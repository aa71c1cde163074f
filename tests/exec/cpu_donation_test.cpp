// Buffer donation on the cpu executor (Executable::run_donating, sessions): results written in
// place into donated arguments that die, equal to a plain run bit for bit; never into an
// argument that is itself a result or still read through a view; never into storage another
// tensor shares (the caller's copy keeps its values); a session's state donated step by step.
#include <cstring>

#include "exec/cpu/cpu_backend.h"
#include "tests/exec/test_util.h"

namespace netspec::testing {
namespace {

const Shape kShape{64, 40};
const Type kT = Type::tensor(DType::kF32, kShape);

// An Adam-like update (w, g, m, v) -> (w', m', v'): one fused group reading all four.
Values adam_body(Builder& b, const Values& a) {
  auto c = [&](double v) { return b.constant_splat(v, kT); };
  Value* m1 = b.add(b.multiply(c(0.9), a[2]), b.multiply(c(0.1), a[1]));
  Value* v1 = b.add(b.multiply(c(0.999), a[3]), b.multiply(c(0.001), b.multiply(a[1], a[1])));
  Value* upd = b.divide(m1, b.add(b.sqrt(v1), c(1e-8)));
  Value* w1 = b.subtract(a[0], b.multiply(c(1e-3), upd));
  return {w1, m1, v1};
}

std::vector<Tensor> adam_inputs(uint32_t seed) {
  return {random_f32(kShape, seed), random_f32(kShape, seed + 1),
          random_f32(kShape, seed + 2, -0.1, 0.1), random_f32(kShape, seed + 3, 0, 0.01)};
}

std::vector<Tensor> clones(const std::vector<Tensor>& ts) {
  std::vector<Tensor> r;
  for (const Tensor& t : ts) r.push_back(t.clone());
  return r;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

const std::vector<bool> kDonateWMV{true, false, true, true};

TEST(CpuDonation, PlanWritesEachUpdatedStateIntoItsDonatedArgument) {
  auto m = make_module({kT, kT, kT, kT}, adam_body);
  EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0]).donated, 0);
  EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0], kDonateWMV).donated, 3);
  // g is read by the same group but not donated; only w donated: one result in place.
  EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0], {true, false, false, false}).donated, 1);
}

TEST(CpuDonation, ResultsEqualPlainRunAndReuseTheDonatedStorage) {
  auto exe = exec::make_backend("cpu")->load(make_module({kT, kT, kT, kT}, adam_body));
  const std::vector<Tensor> want = exe->run("main", adam_inputs(7));
  std::vector<Tensor> in = clones(adam_inputs(7));  // sole owners: written in place
  const void* storage[4] = {in[0].raw(), in[1].raw(), in[2].raw(), in[3].raw()};
  const Tensor g = in[1];  // not donated: shared, read only
  std::vector<Tensor> got = exe->run_donating("main", in, kDonateWMV);
  ASSERT_EQ(got.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_TRUE(same_bits(got[k], want[k])) << "result " << k;
  // The donated inputs were taken; every result lives in one of their allocations.
  EXPECT_FALSE(in[0].defined());
  EXPECT_FALSE(in[2].defined());
  EXPECT_TRUE(in[1].defined());
  for (size_t k = 0; k < 3; ++k) {
    const void* p = got[k].raw();
    EXPECT_TRUE(p == storage[0] || p == storage[2] || p == storage[3]) << "result " << k;
    EXPECT_NE(p, storage[1]);
  }
  EXPECT_TRUE(same_bits(g, adam_inputs(7)[1]));
}

TEST(CpuDonation, SharedDonatedInputIsCopiedNeverWritten) {
  auto exe = exec::make_backend("cpu")->load(make_module({kT, kT, kT, kT}, adam_body));
  const std::vector<Tensor> want = exe->run("main", adam_inputs(3));
  std::vector<Tensor> caller = adam_inputs(3);
  std::vector<Tensor> in = caller;  // every donated input shares the caller's storage
  std::vector<Tensor> got = exe->run_donating("main", in, kDonateWMV);
  for (size_t k = 0; k < 3; ++k) EXPECT_TRUE(same_bits(got[k], want[k])) << "result " << k;
  const std::vector<Tensor> fresh = adam_inputs(3);
  for (size_t k = 0; k < 4; ++k) EXPECT_TRUE(same_bits(caller[k], fresh[k])) << "input " << k;
  for (const Tensor& r : got)
    for (const Tensor& c : caller) EXPECT_NE(r.raw(), c.raw());
}

TEST(CpuDonation, ArgumentReturnedOrViewedIsNotOverwritten) {
  // (a, a + b): a is a result itself, so a + b must not go into a's storage.
  BodyFn passthrough = [](Builder& b, const Values& a) { return Values{a[0], b.add(a[0], a[1])}; };
  // (exp(a), reshape(a)): the reshape (a view of a, made first) is returned.
  BodyFn viewed = [](Builder& b, const Values& a) {
    Value* v = b.reshape(a[0], {40, 64});
    return Values{b.exponential(a[0]), v};
  };
  for (const BodyFn* body : {&passthrough, &viewed}) {
    auto m = make_module({kT, kT}, *body);
    EXPECT_EQ(exec::cpu::plan_stats(*m->funcs[0], {true, true}).donated, body == &viewed ? 0 : 1)
        << (body == &viewed ? "viewed" : "passthrough");
    auto exe = exec::make_backend("cpu")->load(m);
    const Tensor a = random_f32(kShape, 11), b = random_f32(kShape, 12);
    const std::vector<Tensor> want = exe->run("main", {a, b});
    std::vector<Tensor> in = clones({a, b});
    std::vector<Tensor> got = exe->run_donating("main", in, {true, true});
    for (size_t k = 0; k < 2; ++k) EXPECT_TRUE(same_bits(got[k], want[k])) << "result " << k;
    EXPECT_TRUE(same_bits(got[0], body == &viewed ? want[0] : a));
  }
}

TEST(CpuDonation, MistypedInputLeavesDonatedInputsInPlace) {
  auto exe = exec::make_backend("cpu")->load(make_module({kT, kT, kT, kT}, adam_body));
  std::vector<Tensor> in = adam_inputs(5);
  in[1] = random_f32({3}, 1);  // wrong shape: refused before the run starts
  EXPECT_THROW(exe->run_donating("main", in, kDonateWMV), Error);
  EXPECT_TRUE(same_bits(in[0], adam_inputs(5)[0]));
  EXPECT_TRUE(same_bits(in[3], adam_inputs(5)[3]));
}

// A session feeding (w', m', v') back to (w, m, v): equal to chained plain runs, state() is a
// copy that later steps leave alone, and a refused step keeps the state.
TEST(CpuDonation, SessionStateIsDonatedStepByStep) {
  auto exe = exec::make_backend("cpu")->load(make_module({kT, kT, kT, kT}, adam_body));
  std::vector<Tensor> chain = adam_inputs(21);
  auto session = exe->open_session("main", {{0, 0}, {2, 1}, {3, 2}});
  const std::vector<Tensor> start = adam_inputs(21);
  session->set_state(0, start[0]);
  session->set_state(2, start[2]);
  session->set_state(3, start[3]);
  Tensor w_after_1, want_1;
  for (int s = 0; s < 4; ++s) {
    const Tensor g = random_f32(kShape, 100 + s);
    chain[1] = g;
    std::vector<Tensor> out = exe->run("main", chain);
    chain = {out[0], g, out[1], out[2]};
    session->step({Tensor(), g, Tensor(), Tensor()});
    if (s == 0) {
      w_after_1 = session->state(0);
      want_1 = chain[0].clone();
    }
  }
  EXPECT_TRUE(same_bits(session->state(0), chain[0]));
  EXPECT_TRUE(same_bits(session->state(2), chain[2]));
  EXPECT_TRUE(same_bits(session->state(3), chain[3]));
  // The caller's tensors given to set_state and the copy taken after step 1 are untouched.
  EXPECT_TRUE(same_bits(start[0], adam_inputs(21)[0]));
  EXPECT_TRUE(same_bits(w_after_1, want_1));
  EXPECT_FALSE(same_bits(w_after_1, chain[0]));
  EXPECT_THROW(session->step({Tensor(), random_f32({2}, 1), Tensor(), Tensor()}), Error);
  session->step({Tensor(), random_f32(kShape, 9), Tensor(), Tensor()});  // state kept
  chain[1] = random_f32(kShape, 9);
  EXPECT_TRUE(same_bits(session->state(0), exe->run("main", chain)[0]));
}

// Two replicas on threads (run_replicated_donating): each keeps and updates its own copy of the
// state, which starts shared between them (set_state) and so is copied before the first write.
TEST(CpuDonation, ReplicatedSessionUpdatesEachReplicaInPlace) {
  auto exe = exec::make_backend("cpu")->load(make_module({kT, kT, kT, kT}, adam_body));
  auto session = exe->open_session("main", {{0, 0}, {2, 1}, {3, 2}}, 2);
  const std::vector<Tensor> start = adam_inputs(31);
  for (size_t k : {0u, 2u, 3u}) session->set_state(k, start[k]);
  std::vector<std::vector<Tensor>> chain(2, adam_inputs(31));
  for (int s = 0; s < 3; ++s) {
    std::vector<std::vector<Tensor>> in(2);
    for (int r = 0; r < 2; ++r) {
      const Tensor g = random_f32(kShape, 200 + 10 * s + r);
      chain[r][1] = g;
      std::vector<Tensor> out = exe->run("main", chain[r]);
      chain[r] = {out[0], g, out[1], out[2]};
      in[r] = {Tensor(), g, Tensor(), Tensor()};
    }
    session->step_replicated(in);
  }
  // state() is replica 0's; replica 1's differs (other gradients) and was never mixed in.
  EXPECT_TRUE(same_bits(session->state(0), chain[0][0]));
  EXPECT_TRUE(same_bits(session->state(3), chain[0][3]));
  EXPECT_FALSE(same_bits(chain[0][0], chain[1][0]));
  EXPECT_TRUE(same_bits(start[0], adam_inputs(31)[0]));
}

// A fused group computes its outputs in their own buffers (no copy out of a tile) unless an
// input sharing that buffer is read after the output is written: here the first output (y * y)
// is written before x and y are read again, so the donated buffer it may take must not be
// written early. Results equal a plain run, in place, whichever input is donated.
TEST(CpuDonation, DonatedInputReadAfterAnOutputIsWritten) {
  const Type t = Type::tensor(DType::kF32, {37, 1000});  // tiles do not divide it
  auto body = [](Builder& b, const Values& a) {
    Value* sq = b.multiply(a[1], a[1]);                    // output 0, written first
    return Values{sq, b.multiply(b.add(sq, a[0]), a[1])};  // x and y read afterwards
  };
  auto exe = exec::make_backend("cpu")->load(make_module({t, t}, body));
  auto inputs = [&] {
    return std::vector<Tensor>{random_f32({37, 1000}, 41), random_f32({37, 1000}, 42)};
  };
  const std::vector<Tensor> want = exe->run("main", inputs());
  for (const std::vector<bool>& donate :
       {std::vector<bool>{true, false}, {false, true}, {true, true}}) {
    std::vector<Tensor> in = clones(inputs());
    const void* storage[2] = {in[0].raw(), in[1].raw()};
    std::vector<Tensor> got = exe->run_donating("main", in, donate);
    ASSERT_EQ(got.size(), 2u);
    int in_place = 0;
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_TRUE(same_bits(got[k], want[k]))
          << "result " << k << " donating " << donate[0] << donate[1];
      in_place += got[k].raw() == storage[0] || got[k].raw() == storage[1];
    }
    EXPECT_GE(in_place, 1);
  }
}

}  // namespace
}  // namespace netspec::testing
