// The xla (PJRT) and iree backends on hand-built modules: results equal the cpu executor's,
// replicated all_reduce runs on 2 PJRT CPU devices, a session keeps state on the device, and
// plugin errors name what went wrong. Skipped with a message when scripts/install-engines.sh
// has not installed the engines (or netspec was built without the PJRT header).
#include <filesystem>

#include "engine_util.h"
#include "exec/test_util.h"
#ifdef NETSPEC_HAVE_PJRT
#include "exec/pjrt/pjrt_client.h"
#endif

namespace netspec::testing {
namespace {

using hlo::OpKind;

// y = tanh(x·W + b) summed over rows, with an i32 argmax-style output: dot, broadcast, reduce.
std::shared_ptr<hlo::Module> small_module() {
  return make_module({Type::tensor(DType::kF32, {3, 4}), Type::tensor(DType::kF32, {4, 2}),
                      Type::tensor(DType::kF32, {2})},
                     [](Builder& b, const Values& a) {
                       hlo::DotDims d;
                       d.lhs_contracting = {1};
                       d.rhs_contracting = {0};
                       Value* y = b.dot_general(a[0], a[1], d);
                       Value* bb = b.broadcast_in_dim(a[2], y->type.shape(), {1});
                       Value* t = b.tanh(b.add(y, bb));
                       return Values{t, b.reduce(t, b.scalar(0, DType::kF32), {0}, OpKind::kAdd)};
                     });
}

std::vector<Tensor> small_inputs() {
  return {f32({3, 4}, {1, -2, 0.5, 3, 0, 1, -1, 2, 0.25, 0.5, 0.75, -1}),
          f32({4, 2}, {0.1, -0.2, 0.3, 0.4, -0.5, 0.6, 0.7, -0.8}), f32({2}, {0.05, -0.1})};
}

void expect_near_all(const std::vector<Tensor>& got, const std::vector<Tensor>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].type_str(), want[k].type_str()) << "output " << k;
    for (int64_t i = 0; i < got[k].numel(); ++i)
      EXPECT_NEAR(got[k].as_double(i), want[k].as_double(i), tol)
          << "output " << k << "[" << i << "]";
  }
}

TEST(Engines, XlaMatchesCpuOnASmallModule) {
  REQUIRE_ENGINE(xla, "xla");
  auto m = small_module();
  auto want = exec::make_backend("cpu")->load(m)->run("main", small_inputs());
  auto got = xla->load(m)->run("main", small_inputs());
  expect_near_all(got, want, 1e-6);
  // A value computed by hand: row 0 of x·W + b = (1·0.1 - 2·0.3 + 0.5·-0.5 + 3·0.7 + 0.05).
  EXPECT_NEAR(got[0].as_double(0), std::tanh(0.1 - 0.6 - 0.25 + 2.1 + 0.05), 1e-6);
}

TEST(Engines, XlaReplicatedAllReduceOnTwoDevices) {
  exec::BackendOptions o;
  o.devices = 2;
  REQUIRE_ENGINE(xla, "xla", o);
  auto m = make_module({Type::tensor(DType::kF32, {2}), Type::tensor(DType::kI32, {})},
                       [](Builder& b, const Values& a) {
                         Values s = b.all_reduce({a[0]}, {}, OpKind::kAdd);
                         Values mx = b.all_reduce({a[1]}, {}, OpKind::kMaximum);
                         return Values{s[0], mx[0]};
                       });
  std::vector<std::vector<Tensor>> in{{f32({2}, {1, 10}), i32({}, {7})},
                                      {f32({2}, {2, 20}), i32({}, {-3})}};
  auto out = xla->load(m)->run_replicated("main", in);
  auto want = exec::make_backend("cpu")->load(m)->run_replicated("main", in);
  ASSERT_EQ(out.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    expect_equal(out[r].at(0), f32({2}, {3, 30}));
    expect_equal(out[r].at(1), i32({}, {7}));
    expect_equal(out[r].at(0), want[r].at(0));
  }
  // Three replicas on two devices: refused with the counts.
  in.push_back(in[0]);
  std::string e;
  try {
    xla->load(m)->run_replicated("main", in);
  } catch (const Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("[xla] 3 replicas need 3 devices"), std::string::npos) << e;
}

// s' = s + x (state fed back), y = 2·s: the session returns y and keeps s on the device.
TEST(Engines, SessionKeepsStateOnEveryBackend) {
  auto m = make_module({Type::tensor(DType::kF32, {2}), Type::tensor(DType::kF32, {2})},
                       [](Builder& b, const Values& a) {
                         return Values{b.add(a[0], a[1]), b.add(a[0], a[0])};
                       });
  for (const char* name : {"cpu", "ref", "xla"}) {
    std::string why;
    auto be = test_util::try_backend(name, why);
    if (!be) {
      std::cout << "[ skip     ] " << name << ": " << why << "\n";
      continue;
    }
    auto exe = be->load(m);
    auto s = exe->open_session("main", {{0, 0}});
    s->set_state(0, f32({2}, {1, 2}));
    std::vector<Tensor> in{Tensor(), f32({2}, {10, 100})};
    auto o1 = s->step(in);
    auto o2 = s->step(in);
    EXPECT_EQ(o1[0].numel(), 0) << name;  // the fed-back output stays in the session
    expect_equal(o1[1], f32({2}, {2, 4}));
    expect_equal(o2[1], f32({2}, {22, 204}));
    expect_equal(s->state(0), f32({2}, {21, 202}));
  }
}

// Two replicas, each with its own state: s' = s + x, y = all_reduce(s) (the replicas' sum).
TEST(Engines, ReplicatedSessionKeepsStatePerReplica) {
  auto m =
      make_module({Type::tensor(DType::kF32, {2}), Type::tensor(DType::kF32, {2})},
                  [](Builder& b, const Values& a) {
                    return Values{b.add(a[0], a[1]), b.all_reduce({a[0]}, {}, OpKind::kAdd)[0]};
                  });
  exec::BackendOptions o;
  o.devices = 2;
  for (const char* name : {"cpu", "ref", "xla"}) {
    std::string why;
    auto be = test_util::try_backend(name, why, o);
    if (!be) {
      std::cout << "[ skip     ] " << name << ": " << why << "\n";
      continue;
    }
    auto exe = be->load(m);
    auto s = exe->open_session("main", {{0, 0}}, 2);
    s->set_state(0, f32({2}, {1, 2}));
    std::vector<std::vector<Tensor>> in{{Tensor(), f32({2}, {10, 100})},
                                        {Tensor(), f32({2}, {20, 200})}};
    auto o1 = s->step_replicated(in);
    auto o2 = s->step_replicated(in);
    ASSERT_EQ(o2.size(), 2u) << name;
    EXPECT_EQ(o1[1][0].numel(), 0) << name;  // fed back: stays in the session
    for (int r = 0; r < 2; ++r) {
      expect_equal(o1[r][1], f32({2}, {2, 4}));
      expect_equal(o2[r][1], f32({2}, {1 + 10 + 1 + 20, 2 + 100 + 2 + 200}));
    }
    expect_equal(s->state(0), f32({2}, {21, 202}));  // replica 0's copy
    std::string e;
    try {
      s->step(in[0]);
    } catch (const Error& x) {
      e = x.what();
    }
    EXPECT_NE(e.find("a session of 2 replicas steps with step_replicated"), std::string::npos)
        << name << ": " << e;
  }
}

TEST(Engines, XlaPluginErrorsAreNamed) {
  exec::BackendOptions o;
  o.pjrt_plugin = "/nonexistent/plugin.so";
  std::string why;
  EXPECT_EQ(test_util::try_backend("xla", why, o), nullptr);
  // Built without PJRT: the registry says so; built with it: the missing file is named.
  EXPECT_TRUE(why.find("[xla] --pjrt-plugin /nonexistent/plugin.so: no such file") !=
                  std::string::npos ||
              why.find("built without PJRT support") != std::string::npos)
      << why;
  REQUIRE_ENGINE(xla, "xla");
  // A module XLA rejects: the plugin's own message comes back under [xla].
  auto m = make_module({Type::tensor(DType::kF32, {2})},
                       [](Builder& b, const Values& a) { return Values{b.add(a[0], a[0])}; });
  m->funcs.front()->name = "not_main";
  std::string e;
  try {
    xla->load(m)->run("not_main", {f32({2}, {1, 2})});
  } catch (const Error& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("[xla] PJRT runs the module's @main"), std::string::npos) << e;
}

#ifdef NETSPEC_HAVE_PJRT
// xla.CompileOptionsProto bytes written out by hand from the proto definitions:
// 1a LEN { 20 02 (num_replicas 2) 28 01 (num_partitions 1) 4a 0a { 08 02 (replica_count)
// 10 01 (computation_count) 1a 04 { 08 00 08 01 (replica_device_ids 0, 1) } } }.
TEST(Engines, CompileOptionsProtoBytes) {
  const std::string want("\x1a\x10\x20\x02\x28\x01\x4a\x0a\x08\x02\x10\x01\x1a\x04\x08\x00\x08\x01",
                         18);
  EXPECT_EQ(exec::pjrt::compile_options_proto(2, {0, 1}), want);
  EXPECT_EQ(exec::pjrt::compile_options_proto(1, {}), std::string("\x1a\x04\x20\x01\x28\x01", 6));
  EXPECT_THROW(exec::pjrt::compile_options_proto(0, {}), Error);
}
#endif

TEST(Engines, IreeMatchesCpuOnASmallModule) {
  REQUIRE_ENGINE(iree, "iree");
  auto m = small_module();
  auto want = exec::make_backend("cpu")->load(m)->run("main", small_inputs());
  std::vector<Tensor> got;
  try {
    got = iree->load(m)->run("main", small_inputs());
  } catch (const Error& e) {
    if (std::string(e.what()).find("is not installed") != std::string::npos)
      GTEST_SKIP() << e.what();
    throw;
  }
  expect_near_all(got, want, 1e-6);
}

}  // namespace
}  // namespace netspec::testing
