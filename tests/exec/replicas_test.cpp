// ReplicaComm / run_on_replicas: exchanges deliver every replica's contribution in order, and a
// replica that fails aborts the others instead of leaving them waiting forever.
#include "exec/replicas.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace netspec::exec {
namespace {

TEST(Replicas, ExchangeDeliversAllContributionsEveryRound) {
  auto outs = run_on_replicas(3, [](int r, ReplicaComm& comm) {
    std::vector<Tensor> got;
    for (int round = 0; round < 5; ++round) {
      auto all = comm.exchange(r, {Tensor::from<int>(DType::kI32, {}, {10 * round + r})});
      int sum = 0;
      for (const auto& a : all) sum += static_cast<int>(a[0].as_int64(0));
      got.push_back(Tensor::from<int>(DType::kI32, {}, {sum}));
    }
    return got;
  });
  ASSERT_EQ(outs.size(), 3u);
  for (const auto& o : outs)
    for (int round = 0; round < 5; ++round) EXPECT_EQ(o[round].as_int64(0), 30 * round + 3);
}

TEST(Replicas, FailingReplicaAbortsTheOthersAndItsErrorIsReported) {
  try {
    run_on_replicas(4, [](int r, ReplicaComm& comm) -> std::vector<Tensor> {
      if (r == 2) fail("test", "replica 2 broke");
      comm.exchange(r, {});
      comm.exchange(r, {});
      return {};
    });
    FAIL() << "expected the replica's error";
  } catch (const ReplicaAborted&) {
    FAIL() << "the abort, not the cause, was reported";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "[test] replica 2 broke");
  }
  EXPECT_THROW(run_on_replicas(0, [](int, ReplicaComm&) { return std::vector<Tensor>{}; }), Error);
}

// Child of the death test: caps the address space ~256 MiB above what is mapped, then asks for
// kMaxReplicas threads; exits 0 when that ends in an Error (printed), 1 when all ran.
void replicas_under_memory_limit() {
  long pages = 0;
  std::ifstream("/proc/self/statm") >> pages;  // current virtual size in pages
  const rlim_t cap =
      static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (256u << 20);
  rlimit lim{cap, cap};
  setrlimit(RLIMIT_AS, &lim);
  try {
    run_on_replicas(kMaxReplicas, [](int r, ReplicaComm& comm) {
      comm.exchange(r, {});
      return std::vector<Tensor>{};
    });
    std::fprintf(stderr, "all replicas ran\n");
    std::_Exit(1);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::_Exit(0);
  }
}

// Issue 25 item 3: more replicas than threads can be created (here: under an address-space limit
// that fits a few dozen 8 MiB thread stacks) ends in an Error naming the replica, not in
// std::terminate ("terminate called without an active exception"); too many is refused first.
TEST(Replicas, ThreadCreationFailureIsAnErrorAndReplicasAreBounded) {
  EXPECT_THROW(
      run_on_replicas(kMaxReplicas + 1, [](int, ReplicaComm&) { return std::vector<Tensor>{}; }),
      Error);
  EXPECT_EXIT(replicas_under_memory_limit(), ::testing::ExitedWithCode(0),
              "could not start replica [0-9]+ of 1024");
}

}  // namespace
}  // namespace netspec::exec
