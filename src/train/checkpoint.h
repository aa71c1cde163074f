// Training state and its checkpoints. A checkpoint is one safetensors file holding the
// parameters (ParamTable names), the optimizer state (`<slot>.<param>`) and the BN running
// statistics (`<bn>.running_mean/var`), with metadata: net, completed epochs, optimizer steps,
// and for a mid-epoch save (SIGINT) the updates already done in the next epoch and their loss sum
// (hex float, so a resumed run reproduces the uninterrupted one bit for bit).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "emit/manifest.h"
#include "spec/param_table.h"

namespace netspec::train {

// Metadata "format": "pt" (PyTorch layouts, as Hugging Face tools expect) and "netspec.format":
// "netspec-checkpoint-3"; formats 1 and 2 kept netspec's name in "format".
inline constexpr int kCheckpointFormat = 3;

// Where the training data stands (MosaicML Streaming's and grain's resumable iterator state): the
// epoch's seeded permutation of `samples` indices and the `position` of the next sample in it.
// Batch j of the epoch is positions [j·batch, (j+1)·batch), so a resume starts the loader at batch
// position / batch and reads nothing before it. The order depends on (seed, epoch, samples)
// only, not on the replicas or decode threads, so a run may resume on another world size.
// Metadata "netspec.data_cursor": "epoch=E position=P seed=S samples=N batch=B replicas=R".
struct DataCursor {
  int64_t epoch = 0;     // the epoch being trained, 0-based (= completed epochs)
  int64_t position = 0;  // samples of its permutation already trained
  int64_t seed = 0;      // TrainConfig::seed, the permutation's seed
  int64_t samples = 0;   // the epoch's training-set size (the permutation's length)
  int64_t batch = 0;     // the global batch size
  int64_t replicas = 1;  // replicas (all processes) of the run that saved it
  bool present = false;  // false: a checkpoint from before the cursor (batch_in_epoch then)
};
std::string cursor_text(const DataCursor& c);
// Parses cursor_text's form; a bad value fails naming `path`.
DataCursor parse_cursor(const std::string& text, const std::string& path);

struct TrainState {
  std::vector<Tensor> params, opt, running;  // running: mean, var per BN, interleaved
  std::vector<std::string> opt_names, running_names;
  int epoch = 0;               // completed epochs
  int64_t step = 0;            // optimizer updates made
  int64_t batch_in_epoch = 0;  // updates already made in epoch `epoch + 1` (mid-epoch save)
  double loss_sum = 0;         // Σ loss·samples over those updates (the epoch mean is /samples)
  // Checkpoint format read from the file (save writes kCheckpointFormat). Format 1 (before the tail
  // batch was trained) kept loss_sum as Σ per-update mean losses: the trainer rescales it on
  // resume.
  int format = kCheckpointFormat;
  // The checkpoint policy's state after the last completed epoch (checkpoint_policy.h: top-k,
  // early stop, plateau), JSON; metadata "netspec.policy", absent when empty.
  std::string policy;
  DataCursor cursor;  // set by the loop before each save of `last`
};

// Fresh state: params from `params`, zero optimizer state per the train-step manifest's
// optimizer_state inputs, running mean 0 / var 1 per the eval manifest's bn_running_stat inputs.
TrainState make_state(std::vector<Tensor> params, const emit::Manifest& step_manifest,
                      const emit::Manifest& eval_manifest);

// with_optimizer = false (best) writes weights + BN statistics only.
void save_checkpoint(const std::string& path, const ParamTable& t, const TrainState& s,
                     const std::string& net, bool with_optimizer = true);
// Loads every tensor of `s` by name (shape and dtype must match, naming the tensor otherwise)
// and the counters. with_optimizer = false loads params and running stats only (eval/predict);
// it also reads files without netspec metadata (converted weights: counters stay 0). Formats 1-3.
void load_checkpoint(const std::string& path, const ParamTable& t, TrainState& s,
                     bool with_optimizer = true);

}  // namespace netspec::train
