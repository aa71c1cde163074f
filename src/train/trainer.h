// Training: run_training sets up a run — the task (src/tasks: what the labels are, how each
// epoch's set and batches are made, how it is evaluated and reported, which fields it reads), the
// modules (Stepper: the fused train step or gradient accumulation; Evaluator: the eval module),
// the initial or resumed state and the run dir's record — and hands it to the epoch/update loop,
// whose hooks (train/hooks.h) do the rest: progress, the divergence guard, evaluation every
// evalEveryNEpochs epochs and after the last, EMA/SWA/SWAG, TTA, and in RUN_DIR the metrics.csv
// / .jsonl and steps.csv / .jsonl rows, loss.png/.svg, best.safetensors + best.json by the task's
// score (top-1, mIoU, mAP@0.5, -MSE) and last.safetensors every checkpointEveryNEpochs epochs
// (docs/training.md).
// Resume: rerunning with the same run dir continues from last.safetensors, mid-epoch when it was
// saved by SIGINT/SIGTERM (the loop finishes the current step, saves and returns interrupted).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <numbers>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "data/datasets.h"
#include "spec/param_table.h"
#include "spec/spec_json.h"
#include "tasks/detection/detection.h"
#include "train/data_parallel.h"
#include "train/evaluate.h"

namespace netspec::train {

// Initial parameters in ParamTable order. he: linear weights and biases U(±1/sqrt(fan_in)) (PyTorch
// default), conv weights N(0, 2/fan_out) (kaiming fan_out); vit/convnext: trunc N(0, 0.02²)
// weights. zeros/ones as named; embeddings/tokens and Swin's relative-position bias trunc
// N(0, 0.02²); ConvNeXt layer scale 1e-6; Mamba A_log[d, n] = ln(n + 1), D = 1, dt bias =
// softplus⁻¹(dt) with dt log-uniform in [1e-3, 0.1]. Deterministic per seed.
std::vector<Tensor> init_params(const ParamTable& t, InitKind kind, uint64_t seed);

// Learning rate for the 0-based iteration `step` (steps_per_epoch = ceil(ceil(N/B) / k), the tail
// batch counting as a step like PyTorch's len(loader)): linear warmup over warmupEpochs, then
// constant, cosine to 0 at the end of training, or exponential (expLRDecayRate per
// expLRDecayEpochs); plateau is constant here, capped at run time by the monitor.
double learning_rate(const TrainConfig& c, int64_t step, int64_t steps_per_epoch);

// Datasets come from src/data (load_dataset by DatasetKind).
using data::load_dataset;
using data::Splits;

struct TrainOptions {
  std::string run_dir;  // empty: no checkpoints or metrics files
  std::string backend = "cpu";
  std::ostream* log = nullptr;        // resume/epoch lines and progress; nullptr: silent
  bool tty = false;                   // progress bar redrawn in place (else plain periodic lines)
  double progress_every_s = 10;       // plain progress line period; < 0: none
  const ParamTable* table = nullptr;  // build_param_table(spec.net) if the caller has it
  exec::BackendOptions backend_options{};  // xla: plugin path, devices
  // Data parallel (data_parallel.h): R replica threads, or one replica per process (comm set;
  // only rank 0 gets a run_dir and a log, every rank takes rank 0's state at the start). A tail
  // batch that does not divide by R loses its last (n mod R) samples.
  DataParallel dp = {};
  // The run dir's record and the weights to start from (cli/train_run.h).
  struct Run {
    std::string config_json;  // RUN/config.json text (run_dir.h); empty: the resolved spec
    std::string init_from;    // weights to start from (init_from.h); a resume overrides them
  };
  std::shared_ptr<const Run> run = nullptr;
  std::string eval_split = "test";  // what the evaluated split is called ("validation")
  // > 0: also save `last` (with the data cursor) every N updates within an epoch, so a kill
  // loses at most N updates (train --checkpoint-every-steps; not a TrainConfig field: it never
  // changes the result or blocks a resume).
  int64_t checkpoint_every_steps = 0;
  // Updates per backend call (Stepper::steps_per_call, multi_stepper.h); 0: the backend's
  // default, kIreeStepsPerCall on iree (each call a process), else 1.
  int steps_per_call = 0;
};

// The iree backend's default updates per call: process start-up and the .vmfb load paid once per
// this many updates.
inline constexpr int kIreeStepsPerCall = 32;

struct EpochMetrics {
  int epoch = 0;        // 1-based
  int64_t step = 0;     // updates made so far
  int64_t samples = 0;  // training samples this epoch (the dataset's size: the tail is trained)
  double lr = 0, train_loss = 0, seconds = 0, ms_per_step = 0, samples_per_s = 0;
  bool evaluated = false;  // val holds this epoch's evaluation
  bool best = false;       // written to best.safetensors
  EvalMetrics val;
  // Detection data: mAP of the evaluation (val.top1 then holds the VOC mAP@0.5, for best.json).
  bool det = false;
  DetMetrics map;
  // Weight averages and TTA the config enables ("ema_top1", "swa_top1", "swag_top1",
  // "tta_top1"): their top-1 when evaluated this epoch.
  std::vector<std::pair<std::string, std::optional<double>>> average_top1;
};

struct TrainResult {
  int first_epoch = 1;               // > 1 when resumed after a completed epoch
  int64_t first_batch = 0;           // > 0 when resumed mid-epoch
  std::vector<EpochMetrics> epochs;  // the epochs completed by this call
  bool interrupted = false;          // stopped by SIGINT/SIGTERM after saving `last`
  int64_t steps = 0;                 // updates made so far (all calls)
  std::vector<Tensor> params;        // final parameters (ParamTable order)
  double unigram_bpc = 0;            // text: bits/char of a unigram model on the validation split
  // The task's closing line from the last evaluation ("test accuracy 86.12% on 10000 samples";
  // "" when no epoch was evaluated), naming TrainOptions::eval_split.
  std::string final_line;
};

// Bits per character from a mean cross-entropy in nats: loss / ln 2.
inline double bits_per_char(double loss_nats) { return loss_nats / std::numbers::ln2; }

// The settings of c the trainer cannot honour yet ("mixup/cutmix/knnMixup", "trainRes", ...);
// run_training refuses a config where this is non-empty, `train --help` marks them.
std::vector<std::string> unsupported_settings(const TrainConfig& c);

// Trains spec.net with *spec.train (defaults when absent). Throws netspec::Error on bad input, a
// checkpoint that does not match the net, or a non-finite loss (naming the step; the last
// checkpoint is left as it was).
TrainResult run_training(const SpecFile& spec, const Splits& data, const TrainOptions& o);

}  // namespace netspec::train
