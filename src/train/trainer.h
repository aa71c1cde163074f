// The training loop: parameter init from the ParamTable's rules, the emitted train_step module run
// once per batch (lr from the schedule, 1-based step), host-side BN running statistics, evaluation
// on the eval module (loss, top-1 over every test sample) after each epoch, and checkpoints in
// RUN_DIR (last.safetensors + config.json, atomic) with metrics.csv. Rerunning with the same run
// directory resumes after the last completed epoch.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/datasets.h"
#include "spec/param_table.h"
#include "spec/spec_json.h"

namespace netspec::train {

// Initial parameters in ParamTable order. he: linear weights U(±1/sqrt(fan_in)) (PyTorch
// default), conv weights N(0, 2/fan_out) (kaiming fan_out); vit/convnext: trunc N(0, 0.02²)
// weights. zeros/ones as named; embeddings/tokens trunc N(0, 0.02²). Deterministic per seed.
std::vector<Tensor> init_params(const ParamTable& t, InitKind kind, uint64_t seed);

// Learning rate for the 0-based iteration `step`: linear warmup over warmupEpochs, then
// constant, cosine to 0 at the end of training, or exponential (expLRDecayRate per
// expLRDecayEpochs).
double learning_rate(const TrainConfig& c, int64_t step, int64_t steps_per_epoch);

// Datasets come from src/data (load_dataset by DatasetKind).
using data::load_dataset;
using data::Splits;

struct TrainOptions {
  std::string run_dir;  // empty: no checkpoints or metrics files
  std::string backend = "cpu";
  std::ostream* log = nullptr;  // per-epoch lines; nullptr: silent
};

struct EpochMetrics {
  int epoch = 0;  // 1-based
  int64_t step = 0;  // updates made so far
  double lr = 0, train_loss = 0, test_loss = 0, test_acc = 0, seconds = 0, ms_per_step = 0;
};

struct TrainResult {
  int first_epoch = 1;  // > 1 when resumed
  std::vector<EpochMetrics> epochs;  // the epochs run by this call
};

// Trains spec.net with *spec.train (defaults when absent). Throws netspec::Error on bad input, a
// checkpoint that does not match the net, or a non-finite loss (naming the step).
TrainResult run_training(const SpecFile& spec, const Splits& data, const TrainOptions& o);

}  // namespace netspec::train
