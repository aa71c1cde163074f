// The process-group pieces, ranks played by threads of this test: the rendezvous TCP store, Gloo
// sums and exchanges equal to the in-process ones, a rank with another config refused by the
// differing field, and a dead or silent rank turned into an Error within the stated timeout.
#include "dist/process_group.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "core/error.h"
#include "dist/tcp_store.h"
#include "tests/error_of.h"

namespace netspec::dist {
namespace {

using namespace std::chrono_literals;

int free_port() { return free_loopback_port(); }

DistEnv env_for(int rank, int world, int port, std::chrono::milliseconds timeout = 20000ms) {
  DistEnv e;
  e.rank = rank;
  e.world = world;
  e.master_addr = "127.0.0.1";
  e.master_port = port;
  e.timeout = timeout;
  e.token = "test-token";
  return e;
}

using test_util::error_of;

TEST(TcpStore, SetGetAcrossClientsAndTimeoutNamesTheKey) {
  const int port = free_port();
  TcpStore server("127.0.0.1", port, true, 5000ms, "t");
  TcpStore client("127.0.0.1", port, false, 5000ms, "t");
  auto later = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(100ms);
    client.set("k", {'h', 'i'});
  });
  std::vector<char> v = server.get("k");  // blocks until the client sets it
  EXPECT_EQ(std::string(v.begin(), v.end()), "hi");
  later.get();
  const auto t0 = std::chrono::steady_clock::now();
  std::string e = error_of([&] { client.wait({"never"}, 300ms); });
  EXPECT_NE(e.find("'never'"), std::string::npos) << e;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  // No server: connecting gives up after the timeout, naming the address.
  e = error_of([&] { TcpStore("127.0.0.1", free_port(), false, 300ms, "t"); });
  EXPECT_NE(e.find("cannot reach the rendezvous store"), std::string::npos) << e;
}

TEST(ProcessGroup, GlooSumsAndExchangesAcrossRanks) {
  const int port = free_port(), world = 3;
  std::vector<std::future<std::vector<double>>> ranks;
  for (int r = 0; r < world; ++r)
    ranks.push_back(std::async(std::launch::async, [=] {
      auto g = ProcessGroup::join(env_for(r, world, port), R"({"net": "same"})");
      exec::Communicator& c = g->comm();
      EXPECT_EQ(c.num_replicas(), world);
      // f32 and i32 in one call (one allreduce per dtype), a large tensor for segmenting.
      Tensor big(DType::kF32, {300000});
      for (int64_t i = 0; i < big.numel(); ++i)
        big.data<float>()[i] = static_cast<float>(r + i % 7);
      auto sums = c.sum_all(r, {Tensor::from<float>(DType::kF32, {2}, {1.0f * r, 0.5f}),
                                Tensor::from<int>(DType::kI32, {}, {r + 1}), big});
      EXPECT_TRUE(sums.has_value());
      auto all = c.exchange(r, {Tensor::from<double>(DType::kF64, {}, {10.0 * r})});
      std::vector<double> got{(*sums)[0].as_double(0), (*sums)[0].as_double(1),
                              (*sums)[1].as_double(0), (*sums)[2].as_double(299999)};
      for (const auto& a : all) got.push_back(a.at(0).as_double(0));
      return got;
    }));
  for (auto& f : ranks) {
    std::vector<double> got = f.get();
    // 0+1+2, 3 x 0.5, 1+2+3, Σ_r (r + 299999 mod 7), then every rank's contribution in order.
    EXPECT_EQ(got, (std::vector<double>{3, 1.5, 6, 3 + 3.0 * (299999 % 7), 0, 10, 20}));
  }
}

TEST(ProcessGroup, RankWithAnotherConfigIsRefusedNamingTheField) {
  const int port = free_port();
  auto r0 = std::async(std::launch::async, [=] {
    return error_of(
        [&] { ProcessGroup::join(env_for(0, 2, port), R"({"train": {"learningRate": 0.001}})"); });
  });
  std::string e1 = error_of(
      [&] { ProcessGroup::join(env_for(1, 2, port), R"({"train": {"learningRate": 0.01}})"); });
  std::string e0 = r0.get();
  for (const std::string& e : {e0, e1}) {
    EXPECT_NE(e.find("rank 1 was started with another config"), std::string::npos) << e;
    EXPECT_NE(e.find("train.learningRate: 0.01 vs 0.001"), std::string::npos) << e;
  }
}

TEST(ProcessGroup, DeadRankFailsTheOthersAtOnce) {
  const int port = free_port();
  std::promise<void> joined;  // rank 1 leaves only after rank 0's join has finished too: a rank
  auto rank0_joined = joined.get_future().share();  // leaving mid-join fails that join instead
  auto r1 = std::async(std::launch::async, [=] {
    auto g1 = ProcessGroup::join(env_for(1, 2, port, 20000ms), "{}");
    rank0_joined.wait();
  });  // ...then leaves (dies): its sockets close
  auto g = ProcessGroup::join(env_for(0, 2, port, 20000ms), "{}");
  joined.set_value();
  r1.get();
  auto t0 = std::chrono::steady_clock::now();
  std::string e = error_of([&] { g->comm().sum_all(0, {Tensor::scalar_f32(1)}); });
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(e.find("rank 0 of 2: all_reduce across processes failed"), std::string::npos) << e;
  EXPECT_LT(waited, 5.0);  // the closed connection is seen long before the 20 s timeout
}

TEST(ProcessGroup, SilentRankTimesOutWithinTheTimeout) {
  const int port = free_port();
  auto r1 = std::async(std::launch::async, [=] {
    auto g = ProcessGroup::join(env_for(1, 2, port, 1500ms), "{}");
    std::this_thread::sleep_for(2500ms);            // never joins the first all_reduce (hung)
    g->comm().sum_all(1, {Tensor::scalar_f32(1)});  // the second one, after rank 0 timed out
    // and then dies: leaves the group (sockets closed) when g goes out of scope
  });
  auto g = ProcessGroup::join(env_for(0, 2, port, 1500ms), "{}");
  auto t0 = std::chrono::steady_clock::now();
  std::string e = error_of([&] { g->comm().sum_all(0, {Tensor::scalar_f32(1)}); });
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_NE(e.find("rank 0 of 2: all_reduce across processes failed"), std::string::npos) << e;
  EXPECT_GT(waited, 1.0);
  EXPECT_LT(waited, 10.0);
  try {
    r1.get();
  } catch (const Error&) {  // rank 1's late all_reduce may fail too: rank 0 gave up
  }
}

TEST(ProcessGroup, JsonDifferenceNamesTheFirstDifferingPath) {
  EXPECT_EQ(json_difference(R"({"a": 1})", R"({"a": 1})"), "");
  EXPECT_EQ(json_difference(R"({"a": {"b": [1, 2]}})", R"({"a": {"b": [1, 3]}})"),
            "a.b[1]: 2 vs 3");
  EXPECT_EQ(json_difference(R"({"a": 1, "c": 2})", R"({"a": 1})"), "c: 2 vs absent");
}

TEST(ProcessGroup, EnvironmentFollowsTheTorchrunConvention) {
  ::unsetenv("WORLD_SIZE");
  EXPECT_FALSE(dist_env_from_environment().has_value());
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("RANK", "1", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", "29511", 1);
  ::setenv("NETSPEC_DIST_TIMEOUT", "7", 1);
  ::unsetenv("NETSPEC_DIST_TOKEN");  // required when WORLD_SIZE > 1: the store's password
  EXPECT_NE(error_of([] {
              dist_env_from_environment();
            }).find("WORLD_SIZE is 2 but NETSPEC_DIST_TOKEN is not set"),
            std::string::npos);
  ::setenv("NETSPEC_DIST_TOKEN", "abc", 1);
  auto e = dist_env_from_environment();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rank, 1);
  EXPECT_EQ(e->world, 2);
  EXPECT_EQ(e->master_port, 29511);
  EXPECT_EQ(e->timeout, 7000ms);
  EXPECT_EQ(e->token, "abc");
  ::setenv("RANK", "2", 1);
  EXPECT_NE(error_of([] { dist_env_from_environment(); }).find("RANK must be an integer in 0..1"),
            std::string::npos);
  ::unsetenv("MASTER_PORT");
  ::setenv("RANK", "0", 1);
  EXPECT_NE(error_of([] { dist_env_from_environment(); }).find("MASTER_PORT is not"),
            std::string::npos);
  for (const char* v :
       {"WORLD_SIZE", "RANK", "MASTER_ADDR", "NETSPEC_DIST_TIMEOUT", "NETSPEC_DIST_TOKEN"})
    ::unsetenv(v);
}

}  // namespace
}  // namespace netspec::dist

namespace netspec::dist {
namespace {

// With more than two ranks a timeout names no peer: the ranks that timed out report it in the
// store, and the one that never does is named (rank 2 of 4 hangs; 0, 1 and 3 each name it).
TEST(ProcessGroup, HungRankAmongFourIsNamedOnTimeout) {
  const int port = free_loopback_port(), world = 4;
  std::promise<void> done;
  auto all_done = done.get_future().share();
  std::vector<std::future<std::string>> ranks;
  for (int r = 0; r < world; ++r)
    ranks.push_back(std::async(std::launch::async, [=] {
      auto g = ProcessGroup::join(env_for(r, world, port, 1500ms), "{}");
      if (r == 2) {  // hung: never enters the all_reduce; leaves once the others have failed
        all_done.wait();
        return std::string();
      }
      const auto t0 = std::chrono::steady_clock::now();
      std::string e = test_util::error_of([&] { g->comm().sum_all(r, {Tensor::scalar_f32(1)}); });
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      EXPECT_GT(s, 1.0) << r;
      EXPECT_LT(s, 10.0) << r;  // the 1.5 s timeout + the 1 s window for the others' reports
      return e;
    }));
  std::vector<std::string> errors;
  for (int r : {0, 1, 3}) errors.push_back(ranks[static_cast<size_t>(r)].get());
  done.set_value();
  ranks[2].get();
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("all_reduce across processes failed"), std::string::npos) << e;
    EXPECT_NE(e.find("lost rank 2 on 127.0.0.1: it did not report this failure"), std::string::npos)
        << e;
  }
}

}  // namespace
}  // namespace netspec::dist
