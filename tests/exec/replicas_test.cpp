// ReplicaComm / run_on_replicas: exchanges deliver every replica's contribution in order, and a
// replica that fails aborts the others instead of leaving them waiting forever.
#include "exec/replicas.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace netspec::exec
