// Evaluation on the eval module (BN on running statistics): mean cross-entropy, top-1 and top-5
// accuracy (segmentation: IoU, Dice, pixel accuracy) over EVERY sample of a split (the zero-padded
// tail batch is run, only its valid rows scored), and softmax probabilities for `netspec predict`.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/idx.h"
#include "emit/manifest.h"
#include "exec/backend.h"
#include "spec/layer.h"
#include "spec/param_table.h"

namespace netspec::train {

struct EvalMetrics {
  double loss = 0, top1 = 0, top5 = 0;  // top5 only meaningful when has_top5
  int64_t count = 0;                    // scored rows: samples (tokens for text, pixels for seg)
  bool has_top5 = false;                // classes > 5
  bool interrupted = false;             // `stop` said yes before the last batch
  // --skip-bad-images: streamed samples left out as unreadable (summed over the ranks; count
  // holds the samples read) and the first one's error on this rank ("" if none here).
  int64_t skipped = 0;
  std::string skipped_first;
  // Segmentation (logits [B, C, H, W], seg_metrics.h): top1 is the pixel accuracy.
  bool seg = false;
  double miou = 0, dice = 0;            // means over the classes present
  std::vector<double> iou, class_dice;  // per class (NaN: absent from labels and predictions)
  bool regression = false;              // DDPM: loss is the noise-prediction MSE, lower is better
  // Protein folding (tasks/fold): AlphaFold 2's metrics, means over the chains.
  bool fold = false;
  double fape = 0, lddt = 0, dist_ce = 0;  // Å, 0-100, nats
  // What the best checkpoint is chosen by: mIoU for segmentation, -loss for regression, lDDT-Cα
  // for folding, else top-1.
  double score() const { return fold ? lddt : regression ? -loss : seg ? miou : top1; }
};

// Accumulates scores of logits [B, C] rows against labels (first n rows). The loss is summed per
// batch, then the batch sums in batch order, so a split evaluation that folds the same batch sums
// in the same order gets the same bits.
struct Scorer {
  double loss_sum = 0;
  int64_t top1 = 0, top5 = 0, count = 0, classes = 0;
  int64_t skipped = 0;  // unreadable samples left out (Loader::skipped), summed by fold_split
  void add(const Tensor& logits, const Tensor& labels, int64_t n) {
    loss_sum += score(logits, labels, n);
  }
  // Adds the counts of one batch and returns its loss sum (not added to loss_sum).
  double score(const Tensor& logits, const Tensor& labels, int64_t n);
  EvalMetrics result() const;
};

// Evaluation work split across the processes of a group (group nullptr: one process does all):
// rank r takes the batches b with b mod ranks == r. sum() adds up per-batch values and counts of
// every rank; each entry has one non-zero contributor, so the sums are exact and every rank ends
// with the bits one process computes.
struct RankSplit {
  exec::Communicator* group = nullptr;
  int rank = 0;
  int ranks() const { return group ? group->num_replicas() : 1; }
  bool mine(int64_t batch) const { return batch % ranks() == rank; }
  void sum(std::vector<double>& values, std::vector<int64_t>& counts, const char* where) const;
};

// Scores of a split classifier evaluation: the per-batch loss sums (Scorer::score) and s's counts
// summed across the ranks, then the loss sums folded in batch order, as a single process does.
EvalMetrics fold_split(Scorer& s, std::vector<double>& batch_loss, const RankSplit& split);

class Evaluator {
 public:
  // table: build_param_table(net) when the caller has it (nullptr: built here).
  Evaluator(const NetSpec& net, int64_t batch, exec::Backend& backend,
            const ParamTable* table = nullptr);
  const emit::Manifest& manifest() const { return manifest_; }
  int64_t batch() const { return batch_; }
  // Logits [B, C] of one full batch x.
  Tensor logits(const std::vector<Tensor>& params, const std::vector<Tensor>& running,
                const Tensor& x) const;
  // `stop` is asked after each batch; a yes ends the evaluation there (metrics.interrupted); with
  // a group the ranks agree on it after each round (a yes on any rank stops all). Group set
  // (replicas in several processes, this one `rank`): each rank scores the batches b ≡ rank (mod
  // ranks) and the per-batch loss sums and counts are summed across the ranks (each batch's sum has
  // one non-zero contributor, so the sums are exact): every rank gets the bits a single process
  // computes.
  EvalMetrics run(const std::vector<Tensor>& params, const std::vector<Tensor>& running,
                  const data::Dataset& ds, const std::function<bool()>& stop = {},
                  exec::Communicator* group = nullptr, int rank = 0) const;
  // Called after every batch logits() or run() evaluates (`report`'s progress line).
  void on_batch(std::function<void()> f) { on_batch_ = std::move(f); }

 private:
  std::function<void()> on_batch_;
  int64_t batch_;
  emit::Manifest manifest_;
  std::unique_ptr<exec::Executable> exe_;
};

// The one line an evaluation that left out unreadable samples prints (`who` begins it: "eval",
// "epoch 3 evaluation"): "" when none was left out.
std::string skipped_eval_line(const std::string& who, int64_t skipped, const std::string& first,
                              int64_t read);

// Row-wise softmax (max subtracted) of logits [B, C] in f64.
std::vector<std::vector<double>> softmax_rows(const Tensor& logits, int64_t n);

}  // namespace netspec::train
