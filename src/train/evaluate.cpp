// Evaluation (see evaluate.h).
#include "train/evaluate.h"

#include <cmath>

#include "core/error.h"
#include "data/loader.h"
#include "emit/emit.h"
#include "train/seg_metrics.h"

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
  m.has_top5 = classes > 5;
  if (count == 0) return m;
  const double n = static_cast<double>(count);
  m.loss = loss_sum / n;
  m.top1 = static_cast<double>(top1) / n;
  m.top5 = static_cast<double>(top5) / n;
  return m;
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
  return std::move(exe_->run("main", in).at(0));
}

EvalMetrics Evaluator::run(const std::vector<Tensor>& params, const std::vector<Tensor>& running,
                           const data::Dataset& ds, const std::function<bool()>& stop,
                           exec::Communicator* group, int rank) const {
  data::Loader ld(ds, batch_, false, 0);
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
  const int ranks = group ? group->num_replicas() : 1;
  const int first = group ? rank : 0;
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
    }
    if (k + 1 < rounds && stop_agreed()) {
      interrupted = true;
      break;
    }
  }
  if (seg) {  // the confusion counts and per-batch loss sums of every rank, folded in order
    if (group) {
      auto sums = group->sum_all(
          rank, {Tensor::from<double>(DType::kF64, {nb}, batch_loss),
                 Tensor::from<int64_t>(DType::kI64, {static_cast<int64_t>(ss.confusion.size())},
                                       ss.confusion),
                 Tensor::from<int64_t>(DType::kI64, {1}, {ss.count})});
      if (!sums) fail("eval", "the process group's communicator has no sum all_reduce");
      for (int64_t b = 0; b < nb; ++b) batch_loss[size_t(b)] = sums->at(0).as_double(b);
      for (size_t i = 0; i < ss.confusion.size(); ++i)
        ss.confusion[i] = sums->at(1).as_int64(static_cast<int64_t>(i));
      ss.count = sums->at(2).as_int64(0);
    }
    for (double l : batch_loss) ss.loss_sum += l;  // batch order, as a single process
    EvalMetrics m;
    ss.fill(m);
    m.interrupted = interrupted;
    return m;
  }
  s.classes = manifest_.outputs.at(0).shape.back();  // also on a rank that scored no batch
  if (group) {
    auto sums =
        group->sum_all(rank, {Tensor::from<double>(DType::kF64, {nb}, batch_loss),
                              Tensor::from<int64_t>(DType::kI64, {3}, {s.top1, s.top5, s.count})});
    if (!sums) fail("eval", "the process group's communicator has no sum all_reduce");
    for (int64_t b = 0; b < nb; ++b) batch_loss[static_cast<size_t>(b)] = sums->at(0).as_double(b);
    s.top1 = sums->at(1).as_int64(0);
    s.top5 = sums->at(1).as_int64(1);
    s.count = sums->at(1).as_int64(2);
  }
  for (double l : batch_loss) s.loss_sum += l;  // batch order, as a single process
  EvalMetrics m = s.result();
  m.interrupted = interrupted;
  return m;
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
