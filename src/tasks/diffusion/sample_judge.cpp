// Judging generated images with a classifier (see sample_judge.h).
#include "tasks/diffusion/sample_judge.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "data/datasets.h"

namespace netspec::train {

bool JudgeResult::every_class() const {
  return !top_class.empty() && std::ranges::all_of(top_class, [](int64_t v) { return v > 0; });
}

std::string JudgeResult::summary() const {
  std::string s = fmt::format("{}/{} ({:.1f}%) with p >= {}; top class counts", confident, n,
                              100 * confident_fraction(), p_min);
  for (size_t c = 0; c < top_class.size(); ++c) s += fmt::format(" {}:{}", c, top_class[c]);
  s += " (confident";
  for (size_t c = 0; c < confident_class.size(); ++c)
    s += fmt::format(" {}:{}", c, confident_class[c]);
  return s + fmt::format("); every class: {}", every_class() ? "yes" : "no");
}

Tensor judge_input(const Tensor& samples, DatasetKind classifier_dataset) {
  const Shape& s = samples.shape();
  if (s.size() != 4) fail("judge", "samples must be [n, C, H, W] (got {})", samples.type_str());
  const data::Normalization nm = data::dataset_normalization(classifier_dataset);
  if (static_cast<int64_t>(nm.mean.size()) != s[1])
    fail("judge", "the classifier's {} has {} channels (got samples with {})",
         enum_name(classifier_dataset), nm.mean.size(), s[1]);
  Tensor out(DType::kF32, s);
  const int64_t hw = s[2] * s[3];
  for (int64_t i = 0; i < samples.numel(); ++i) {
    const size_t ch = static_cast<size_t>((i / hw) % s[1]);
    const double v01 = (std::clamp(double(samples.data<float>()[i]), -1.0, 1.0) + 1) / 2;
    out.data<float>()[i] = float((v01 - nm.mean[ch]) / nm.std[ch]);
  }
  return out;
}

void judge_logits(const Tensor& logits, int64_t n, JudgeResult& r) {
  const auto p = softmax_rows(logits, n);
  const auto k = static_cast<size_t>(logits.shape().at(1));
  r.top_class.resize(k);
  r.confident_class.resize(k);
  for (const auto& row : p) {
    const auto c = static_cast<size_t>(std::ranges::max_element(row) - row.begin());
    ++r.top_class[c];
    if (row[c] >= r.p_min) {
      ++r.confident_class[c];
      ++r.confident;
    }
    ++r.n;
  }
}

JudgeResult judge_samples(const Evaluator& clf, const std::vector<Tensor>& params,
                          const std::vector<Tensor>& running, const Tensor& samples,
                          DatasetKind classifier_dataset, double p_min) {
  const Tensor x = judge_input(samples, classifier_dataset);
  const Shape& s = x.shape();
  const int64_t b = clf.batch(), per = x.numel() / s[0];
  JudgeResult r;
  r.p_min = p_min;
  for (int64_t i0 = 0; i0 < s[0]; i0 += b) {
    const int64_t n = std::min(b, s[0] - i0);
    Tensor xb(DType::kF32, {b, s[1], s[2], s[3]});  // zero-filled past n
    std::copy_n(x.data<float>() + i0 * per, n * per, xb.data<float>());
    judge_logits(clf.logits(params, running, xb), n, r);
  }
  return r;
}

}  // namespace netspec::train
