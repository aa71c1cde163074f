// Evaluation (see evaluate.h).
#include "train/evaluate.h"

#include <cmath>

#include "core/error.h"
#include "data/loader.h"
#include "data/sample_source.h"
#include "emit/emit.h"
#include "tasks/segmentation/seg_metrics.h"

namespace netspec::train {

double Scorer::score(const Tensor& logits, const Tensor& labels, int64_t n) {
  // Logits [B, ..., C] against labels [B, ...]: every position of the first n samples is one
  // scored row (one per image; one per token for text).
  const int64_t c = logits.shape().back();
  const int64_t per = labels.numel() / std::max<int64_t>(1, labels.shape().at(0));
  if (logits.numel() != labels.numel() * c)
    fail("eval", "logits {} do not match labels {}", logits.type_str(), labels.type_str());
  classes = c;
  const float* l = logits.data<float>();
  const int32_t* y = labels.data<int32_t>();
  double loss = 0;
  for (int64_t i = 0; i < n * per; ++i) {
    const float* r = l + i * c;
    int64_t arg = 0, above = 0;
    for (int64_t j = 1; j < c; ++j)
      if (r[j] > r[arg]) arg = j;
    const int32_t t = y[i];
    if (t < 0 || t >= c) fail("eval", "label {} out of range (got {}, expected < {})", i, t, c);
    double z = 0;
    for (int64_t j = 0; j < c; ++j) {
      z += std::exp(static_cast<double>(r[j] - r[arg]));
      above += r[j] > r[t];
    }
    loss += std::log(z) - static_cast<double>(r[t] - r[arg]);  // logsumexp - logit_t
    top1 += arg == t;
    top5 += above < 5;  // fewer than 5 classes score strictly higher than the label
  }
  count += n * per;
  return loss;
}

EvalMetrics Scorer::result() const {
  EvalMetrics m;
  m.count = count;
  m.skipped = skipped;
  m.has_top5 = classes > 5;
  if (count == 0) return m;
  const double n = static_cast<double>(count);
  m.loss = loss_sum / n;
  m.top1 = static_cast<double>(top1) / n;
  m.top5 = static_cast<double>(top5) / n;
  return m;
}

void RankSplit::sum(std::vector<double>& values, std::vector<int64_t>& counts,
                    const char* where) const {
  if (!group) return;
  std::vector<Tensor> xs;
  if (!values.empty())
    xs.push_back(Tensor::from<double>(DType::kF64, {int64_t(values.size())}, values));
  if (!counts.empty())
    xs.push_back(Tensor::from<int64_t>(DType::kI64, {int64_t(counts.size())}, counts));
  if (xs.empty()) return;
  auto sums = group->sum_all(rank, xs);
  if (!sums) fail(where, "the process group's communicator has no sum all_reduce");
  size_t k = 0;
  if (!values.empty()) {
    for (size_t i = 0; i < values.size(); ++i) values[i] = sums->at(k).as_double(int64_t(i));
    ++k;
  }
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = sums->at(k).as_int64(int64_t(i));
}

EvalMetrics fold_split(Scorer& s, std::vector<double>& batch_loss, const RankSplit& split) {
  std::vector<int64_t> counts = {s.top1, s.top5, s.count, s.skipped};
  split.sum(batch_loss, counts, "eval");
  s.top1 = counts[0];
  s.top5 = counts[1];
  s.count = counts[2];
  s.skipped = counts[3];
  s.loss_sum = 0;
  for (double l : batch_loss) s.loss_sum += l;  // batch order, as a single process
  return s.result();
}

Evaluator::Evaluator(const NetSpec& net, int64_t batch, exec::Backend& backend,
                     const ParamTable* table)
    : batch_(batch) {
  emit::EmitOptions eo;
  eo.batch = batch;
  emit::Emitted e = table ? emit::emit_module(net, *table, ModuleKind::eval, eo)
                          : emit::emit_module(net, ModuleKind::eval, eo);
  manifest_ = e.manifest;
  exe_ = backend.load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
}

Tensor Evaluator::logits(const std::vector<Tensor>& params, const std::vector<Tensor>& running,
                         const Tensor& x) const {
  std::vector<Tensor> in;
  size_t pi = 0, ri = 0;
  for (const auto& ti : manifest_.inputs) {
    if (ti.role == "param")
      in.push_back(params.at(pi++));
    else if (ti.role == "bn_running_stat")
      in.push_back(running.at(ri++));
    else if (ti.role == "input")
      in.push_back(x);
    else
      fail("eval", "eval input '{}' has unknown role {}", ti.name, ti.role);
  }
  Tensor out = std::move(exe_->run("main", in).at(0));
  if (on_batch_) on_batch_();
  return out;
}

EvalMetrics Evaluator::run(const std::vector<Tensor>& params, const std::vector<Tensor>& running,
                           const data::Dataset& ds, const std::function<bool()>& stop,
                           exec::Communicator* group, int rank) const {
  data::Loader ld(ds, batch_, false, 0);
  ld.set_skip_bad(ds.streamed() && data::pipeline_options().skip_bad);  // left out, counted
  ld.start_epoch(0);
  // Parameters and running statistics are session state, set once per evaluation (on xla they
  // stay on the device); only the batches go in.
  std::vector<exec::Feedback> keep;
  std::vector<Tensor> in(manifest_.inputs.size());
  size_t pi = 0, ri = 0, xi = in.size();
  for (size_t k = 0; k < manifest_.inputs.size(); ++k) {
    const auto& ti = manifest_.inputs[k];
    if (ti.role == "param" || ti.role == "bn_running_stat")
      keep.push_back({k, exec::Feedback::kKeep});
    else if (ti.role == "input")
      xi = k;
    else
      fail("eval", "eval input '{}' has unknown role {}", ti.name, ti.role);
  }
  auto session = exe_->open_session("main", keep);
  for (size_t k = 0; k < manifest_.inputs.size(); ++k)
    if (k != xi)
      session->set_state(k,
                         manifest_.inputs[k].role == "param" ? params.at(pi++) : running.at(ri++));
  const bool seg = manifest_.outputs.at(0).shape.size() == 4 && ds.y.rank() == 3;
  Scorer s;
  SegScorer ss;
  if (seg) {  // also on a rank that scores no batch: every rank sums the same-sized counts
    ss.classes = manifest_.outputs.at(0).shape.at(1);
    ss.confusion.assign(static_cast<size_t>(ss.classes * ss.classes), 0);
  }
  const int64_t nb = ld.num_batches();
  const RankSplit split{group, group ? rank : 0};
  const int ranks = split.ranks(), first = split.rank;
  std::vector<double> batch_loss(static_cast<size_t>(nb), 0.0);
  bool interrupted = false;
  // A stop request must be agreed: in a group every rank takes part in one small sum per round
  // (round k scores batch k*ranks + rank), so all ranks leave at the same round and reach the
  // sums below together.
  auto stop_agreed = [&]() {
    const bool mine = stop && stop();
    if (!group) return mine;
    auto any = group->sum_all(rank, {Tensor::from<int64_t>(DType::kI64, {1}, {mine ? 1 : 0})});
    if (!any) fail("eval", "the process group's communicator has no sum all_reduce");
    return any->at(0).as_int64(0) > 0;
  };
  const int64_t rounds = (nb + ranks - 1) / ranks;
  for (int64_t k = 0; k < rounds; ++k) {
    const int64_t b = k * ranks + first;
    if (b < nb) {
      Tensor y;
      int64_t n = ld.batch(b, in.at(xi), y);
      Tensor logits = std::move(session->step(in).at(0));
      batch_loss[static_cast<size_t>(b)] = seg ? ss.score(logits, y, n) : s.score(logits, y, n);
      if (on_batch_) on_batch_();
    }
    if (k + 1 < rounds && stop_agreed()) {
      interrupted = true;
      break;
    }
  }
  if (seg) {  // the confusion counts and per-batch loss sums of every rank, folded in order
    std::vector<int64_t> counts = ss.confusion;
    counts.push_back(ss.count);
    split.sum(batch_loss, counts, "eval");
    std::copy(counts.begin(), counts.end() - 1, ss.confusion.begin());
    ss.count = counts.back();
    for (double l : batch_loss) ss.loss_sum += l;  // batch order, as a single process
    EvalMetrics m;
    ss.fill(m);
    m.interrupted = interrupted;
    m.skipped = ld.skipped().count;  // (label maps never stream today)
    m.skipped_first = ld.skipped().first;
    return m;
  }
  s.classes = manifest_.outputs.at(0).shape.back();  // also on a rank that scored no batch
  s.skipped = ld.skipped().count;
  EvalMetrics m = fold_split(s, batch_loss, split);
  m.interrupted = interrupted;
  m.skipped_first = ld.skipped().first;
  return m;
}

std::string skipped_eval_line(const std::string& who, int64_t skipped, const std::string& first,
                              int64_t read) {
  if (skipped == 0) return "";
  return fmt::format(
      "{}: skipped {} unreadable image{} (--skip-bad-images: left out of the scores, which count "
      "the {} sample{} read){}",
      who, skipped, skipped > 1 ? "s" : "", read, read == 1 ? "" : "s",
      first.empty() ? "" : "; the first: " + first);
}

std::vector<std::vector<double>> softmax_rows(const Tensor& logits, int64_t n) {
  const int64_t c = logits.shape().at(1);
  const float* l = logits.data<float>();
  std::vector<std::vector<double>> out;
  for (int64_t i = 0; i < n; ++i) {
    const float* r = l + i * c;
    float mx = r[0];
    for (int64_t j = 1; j < c; ++j) mx = std::max(mx, r[j]);
    std::vector<double> p(static_cast<size_t>(c));
    double z = 0;
    for (int64_t j = 0; j < c; ++j) z += p[j] = std::exp(static_cast<double>(r[j] - mx));
    for (double& v : p) v /= z;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace netspec::train
