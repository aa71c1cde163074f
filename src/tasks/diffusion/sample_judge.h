// Judging generated images with a trained classifier (the DDPM quality check of issue 19): each
// sample in [-1, 1] is mapped to [0, 1], normalised as the classifier's dataset and classified;
// a sample counts as confident when its top softmax probability is >= p_min. The result is the
// confident fraction and how often each class is the top one (every class present = coverage).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "spec/train_config.h"
#include "train/evaluate.h"

namespace netspec::train {

struct JudgeResult {
  int64_t n = 0, confident = 0;
  double p_min = 0.9;
  std::vector<int64_t> top_class;        // samples whose top class is c
  std::vector<int64_t> confident_class;  // ... and whose top probability is >= p_min
  bool every_class() const;
  double confident_fraction() const { return n ? double(confident) / double(n) : 0; }
  std::string summary() const;  // "734/1000 (73.4%) with p >= 0.9; classes 0:98 ...; every ..."
};

// samples [n, C, H, W] in [-1, 1] (clamped) -> the classifier's input: ((s+1)/2 - mean)/std.
Tensor judge_input(const Tensor& samples, DatasetKind classifier_dataset);
// Adds the first n rows of logits [B, K] to r (r.p_min the threshold).
void judge_logits(const Tensor& logits, int64_t n, JudgeResult& r);
// Classifies all samples in batches of clf.batch() (the last one zero-padded).
JudgeResult judge_samples(const Evaluator& clf, const std::vector<Tensor>& params,
                          const std::vector<Tensor>& running, const Tensor& samples,
                          DatasetKind classifier_dataset, double p_min);

}  // namespace netspec::train
