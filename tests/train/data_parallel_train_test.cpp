// `train --replicas R` on replica threads: with sync-BN, R replicas x B/R samples train the same
// parameters and BN running statistics as one replica on B (f32 tolerance) over whole epochs with
// a tail batch; without it the running statistics follow replica 0's shard; a tail batch that
// does not divide by R loses its remainder; stop + resume at every step gives the uninterrupted
// data-parallel run bit for bit; invalid combinations are refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "data/idx_fixture.h"
#include "layers/param_table.h"
#include "spec/param_table.h"
#include "tests/train/train_test_util.h"
#include "train/signals.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

// 320 training samples: batch 96 leaves a tail of 32.
const Splits& synthetic() {
  static Splits s = test_util::synthetic_fashion(test_util::tmpdir("dp", "data"), 320, 60, 31);
  return s;
}

TrainOptions with_replicas(int r, const std::string& run = "") {
  TrainOptions o;
  o.run_dir = run;
  o.dp.replicas = r;
  return o;
}

using test_util::bn_spec;
using test_util::same_bits;
using test_util::scaled_diff;

TEST(DataParallelTrain, SyncBnReplicasTrainLikeOneGlobalBatch) {
  TrainResult one = run_training(bn_spec(2, 96, true), synthetic(), with_replicas(1));
  for (int reps : {2, 4}) {
    TrainResult dp = run_training(bn_spec(2, 96, true), synthetic(), with_replicas(reps));
    ASSERT_EQ(dp.steps, one.steps);  // 4 updates per epoch (the tail of 32 included)
    EXPECT_LT(scaled_diff(dp.params, one.params), 5e-5) << reps;
    // Moved far from the init: the equality is between two trained models.
    SpecFile sp = bn_spec(1, 96, true);
    std::vector<Tensor> init = init_params(build_param_table(sp.net), sp.train->init, 3);
    EXPECT_GT(scaled_diff(dp.params, init), 1e-2);
    for (size_t e = 0; e < 2; ++e) {
      EXPECT_NEAR(dp.epochs[e].train_loss, one.epochs[e].train_loss, 1e-5) << e;
      EXPECT_NEAR(dp.epochs[e].val.loss, one.epochs[e].val.loss, 1e-4) << e;
      EXPECT_EQ(dp.epochs[e].samples, 320);
    }
  }
}

TEST(DataParallelTrain, WithoutSyncBnTheRunDiffersFromOneGlobalBatch) {
  // Per-shard BN statistics change the normalisation, so the run is not the 1 x B one.
  TrainResult one = run_training(bn_spec(1, 96, false), synthetic(), with_replicas(1));
  TrainResult dp = run_training(bn_spec(1, 96, false), synthetic(), with_replicas(2));
  EXPECT_GT(scaled_diff(dp.params, one.params), 1e-5);
  EXPECT_TRUE(std::isfinite(dp.epochs[0].train_loss));
}

TEST(DataParallelTrain, TailThatDoesNotDivideLosesItsRemainder) {
  // 320 = 3 x 96 + 32; 3 replicas: the tail keeps 30 samples.
  TrainResult dp = run_training(bn_spec(1, 96, true), synthetic(), with_replicas(3));
  EXPECT_EQ(dp.epochs[0].samples, 318);
  EXPECT_EQ(dp.steps, 4);
}

TEST(DataParallelTrain, StopAtEveryStepAndResumeMatchesUninterrupted) {
  TrainResult full = run_training(bn_spec(2, 96, true), synthetic(), with_replicas(2));
  std::string run = test_util::tmpdir("dp", "resume");
  TrainResult r;
  int calls = 0;
  do {
    request_stop(true);
    r = run_training(bn_spec(2, 96, true), synthetic(), with_replicas(2, run));
    request_stop(false);
    ++calls;
    ASSERT_EQ(r.steps, calls);
  } while (r.interrupted && calls < 20);
  EXPECT_EQ(calls, 8);
  EXPECT_TRUE(same_bits(r.params, full.params));
}

TEST(DataParallelTrain, RefusesBadCombinationsByName) {
  auto msg = [](SpecFile s, int reps) {
    try {
      run_training(s, synthetic(), with_replicas(reps));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SpecFile accum = bn_spec(1, 96, true);
  accum.train->gradAccumSteps = 2;
  EXPECT_NE(msg(accum, 2).find("gradAccumSteps"), std::string::npos) << msg(accum, 2);
  EXPECT_NE(msg(bn_spec(1, 95, true), 2).find("does not divide into 2 replicas"),
            std::string::npos);
  // 320 = 2 x 159 + 2: a tail of 2 samples cannot feed 3 replicas.
  EXPECT_NE(msg(bn_spec(1, 159, true), 3).find("fewer than the 3 replicas"), std::string::npos)
      << msg(bn_spec(1, 159, true), 3);
}

}  // namespace
}  // namespace netspec::train
