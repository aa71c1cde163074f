// Weight averages (see averaging.h).
#include "train/averaging.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>

#include "core/error.h"
#include "core/hash.h"
#include "core/safetensors.h"
#include "data/loader.h"
#include "data/sample_source.h"
#include "emit/emit.h"

namespace netspec::train {

double ema_decay(double decay, int64_t update) {
  const int64_t t = update - 1;
  if (t <= 0) return 0.0;
  return std::min(decay, 1 - std::pow(1.0 + static_cast<double>(t), -2.0 / 3.0));
}

void ema_update(std::vector<Tensor>& avg, const std::vector<Tensor>& x, double d) {
  if (avg.empty()) {
    for (const Tensor& t : x) avg.push_back(t.clone());
    if (d == 0) return;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    float* a = avg.at(i).data<float>();
    const float* v = x[i].data<float>();
    for (int64_t j = 0; j < x[i].numel(); ++j)
      a[j] = static_cast<float>(d * a[j] + (1 - d) * static_cast<double>(v[j]));
  }
}

void swa_update(std::vector<Tensor>& avg, const std::vector<Tensor>& x, int64_t n) {
  if (n == 0 || avg.empty()) {
    avg.clear();
    for (const Tensor& t : x) avg.push_back(t.clone());
    return;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    float* a = avg.at(i).data<float>();
    const float* v = x[i].data<float>();
    for (int64_t j = 0; j < x[i].numel(); ++j)
      a[j] = static_cast<float>(a[j] + (static_cast<double>(v[j]) - a[j]) / (n + 1.0));
  }
}

void Swag::collect(const std::vector<Tensor>& params) {
  std::vector<Tensor> sq;
  for (const Tensor& p : params) {
    Tensor s = p.clone();
    for (float& v : s.span<float>()) v = v * v;
    sq.push_back(std::move(s));
  }
  swa_update(mean_, params, n_);
  swa_update(sq_, sq, n_);
  ++n_;
  std::vector<Tensor> dev;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor d = params[i].clone();
    const float* m = mean_[i].data<float>();
    float* v = d.data<float>();
    for (int64_t j = 0; j < d.numel(); ++j) v[j] -= m[j];
    dev.push_back(std::move(d));
  }
  dev_.push_back(std::move(dev));
  if (static_cast<int>(dev_.size()) > k_) dev_.erase(dev_.begin());
}

std::vector<Tensor> Swag::sample(uint64_t seed) const {
  if (n_ == 0) fail("swag", "no model collected yet");
  // Standard normals by Box-Muller from counter-based uniforms (seed, stream, index).
  auto normal = [&](uint64_t stream, uint64_t i) {
    const uint64_t h = splitmix64(splitmix64(seed ^ splitmix64(stream)) ^ i);
    const double u1 = (static_cast<double>(h >> 11) + 1) * 0x1.0p-53;
    const double u2 = static_cast<double>(splitmix64(h) >> 11) * 0x1.0p-53;
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  };
  const size_t k = dev_.size();
  std::vector<double> z2(k);
  for (size_t j = 0; j < k; ++j) z2[j] = normal(1, j);
  const double low = k > 1 ? 1 / std::sqrt(2.0 * static_cast<double>(k - 1)) : 0.0;
  std::vector<Tensor> out;
  uint64_t idx = 0;
  for (size_t i = 0; i < mean_.size(); ++i) {
    Tensor s = mean_[i].clone();
    float* v = s.data<float>();
    const float* m = mean_[i].data<float>();
    const float* q = sq_[i].data<float>();
    for (int64_t e = 0; e < s.numel(); ++e, ++idx) {
      const double diag = std::max(static_cast<double>(q[e]) - double(m[e]) * m[e], 0.0);
      double x = m[e] + std::sqrt(diag / 2) * normal(0, idx);
      for (size_t j = 0; j < k; ++j) x += low * z2[j] * dev_[j][i].data<float>()[e];
      v[e] = static_cast<float>(x);
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::pair<std::string, Tensor>> Swag::tensors(const ParamTable& t) const {
  std::vector<std::pair<std::string, Tensor>> v;
  for (size_t i = 0; i < mean_.size(); ++i) v.emplace_back("mean." + t.params[i].name, mean_[i]);
  for (size_t i = 0; i < sq_.size(); ++i) v.emplace_back("sq_mean." + t.params[i].name, sq_[i]);
  for (size_t j = 0; j < dev_.size(); ++j)
    for (size_t i = 0; i < dev_[j].size(); ++i)
      v.emplace_back(fmt::format("dev{}.{}", j, t.params[i].name), dev_[j][i]);
  return v;
}

BnRecompute::BnRecompute(const NetSpec& net, const ParamTable& t, int64_t batch, exec::Backend& be)
    : batch_(batch) {
  emit::EmitOptions eo;
  eo.batch = batch;
  emit::Emitted e = emit::emit_module(net, t, ModuleKind::forward, eo);
  manifest_ = e.manifest;
  exe_ = be.load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
}

std::vector<Tensor> BnRecompute::run(const std::vector<Tensor>& params,
                                     const std::vector<Tensor>& running,
                                     const data::Dataset& ds) const {
  std::vector<Tensor> acc;
  for (const Tensor& r : running) acc.emplace_back(r.dtype(), r.shape());  // zeros
  if (running.empty()) return acc;
  data::Loader ld(ds, batch_, false, 0);
  ld.set_skip_bad(ds.streamed() && data::pipeline_options().skip_bad);  // (train's flag)
  ld.start_epoch(0);
  int64_t batches = 0;
  for (int64_t b = 0; b < ld.num_batches(); ++b) {
    if (ld.batch_rows(b) != batch_) continue;  // full batches only (fixed-batch module)
    Tensor x, y;
    if (ld.batch(b, x, y) != batch_) continue;  // one left out unreadable: not full any more
    if (prepare) prepare(b, x);
    std::vector<Tensor> in;
    size_t pi = 0;
    for (const auto& ti : manifest_.inputs) {
      if (ti.role == "param")
        in.push_back(params.at(pi++));
      else if (ti.role == "input")
        in.push_back(x);
      else
        fail("swa", "forward input '{}' has unknown role {}", ti.name, ti.role);
    }
    std::vector<Tensor> out = exe_->run("main", in);
    size_t bi = 0;
    for (size_t k = 0; k < out.size(); ++k) {
      const auto& ti = manifest_.outputs[k];
      if (ti.role != "bn_batch_stat") continue;
      const double n = static_cast<double>(ti.count);
      const double corr = bi % 2 == 1 && n > 1 ? n / (n - 1) : 1.0;  // unbiased variance
      float* a = acc.at(bi).data<float>();
      const float* v = out[k].data<float>();
      for (int64_t j = 0; j < out[k].numel(); ++j) a[j] += static_cast<float>(corr * v[j]);
      ++bi;
    }
    ++batches;
  }
  if (batches == 0) fail("swa", "no full batch of {} samples to recompute BN statistics", batch_);
  for (Tensor& a : acc)
    for (float& v : a.span<float>()) v = static_cast<float>(v / static_cast<double>(batches));
  return acc;
}

Averages::Averages(const NetSpec& net, const TrainConfig& c, exec::Backend& be, const ParamTable& t,
                   const Evaluator& ev)
    : table_(t), ev_(ev), c_(c), ema_(c.useEMA), swa_(c.useSWA || c.useSWAG) {
  if (c.useSWAG && !c.useSWA) fail("train", "useSWAG needs useSWA (SWAG extends the SWA mean)");
  if (c.useSWAG && c.swagK < 2)
    fail("train", "swagK must be >= 2 for SWAG's low-rank part (got {})", c.swagK);
  if (c.useSWAG) swag_ = std::make_unique<Swag>(c.swagK);
  if (swa_) bn_ = std::make_unique<BnRecompute>(net, t, c.batchSize, be);
}

Averages::~Averages() = default;

void Averages::set_evaluate(std::string column, std::function<double(const TrainState&)> f) {
  if (swag_)  // SWAG's score is the top-1 of logits averaged over its samples
    fail("train",
         "useSWAG needs a classifier (top-1); with a custom score (ddpm: true) use useSWA");
  score_column_ = std::move(column);
  evaluate_ = std::move(f);
}

void Averages::set_bn_input(std::function<void(int64_t b, Tensor& x)> f) {
  if (bn_) bn_->prepare = std::move(f);
}

void Averages::after_step(const TrainState& s) {
  if (!ema_) return;
  if (ema_state_.params.empty()) {  // names and counters from s; buffers of its own (a shared
    ema_state_ = s;                 // one would follow s.running's in-place updates)
    ema_state_.params.clear();
    ema_state_.running.clear();
    ema_state_.opt.clear();
  }
  const double d = ema_decay(c_.emaDecay, s.step);
  ema_update(ema_state_.params, s.params, d);
  ema_update(ema_state_.running, s.running, d);
}

std::string Averages::end_epoch(int epoch, const TrainState& s, const data::Dataset& train,
                                const data::Dataset& test, bool evaluate,
                                const std::string& run_dir, const std::string& net_name) {
  namespace fs = std::filesystem;
  std::string line;
  ema_top1_ = swa_top1_ = swag_top1_ = std::nullopt;
  auto report = [&](const char* name, const TrainState& st, std::optional<double>& top1) {
    if (!evaluate) return;
    if (evaluate_) {  // DDPM: the noise MSE, no top-1
      top1 = evaluate_(st);
      std::string label = score_column_;
      std::replace(label.begin(), label.end(), '_', ' ');
      line += fmt::format("  {} {} {:.4f}", name, label, *top1);
    } else {
      EvalMetrics m = ev_.run(st.params, st.running, test, {}, split_.group, split_.rank);
      top1 = m.top1;
      line += fmt::format("  {} top-1 {:.2f}%", name, 100 * m.top1);
    }
    if (!run_dir.empty())
      save_checkpoint((fs::path(run_dir) / fmt::format("{}.safetensors", name)).string(), table_,
                      st, net_name, false);  // weights + BN statistics, as best.safetensors
  };
  if (ema_ && !ema_state_.params.empty()) {
    ema_state_.epoch = s.epoch;
    ema_state_.step = s.step;
    report("ema", ema_state_, ema_top1_);
  }
  if (swa_ && epoch - 1 >= c_.swaStartEpoch) {
    if (swa_state_.params.empty()) {  // names and counters; swa_update copies the values
      swa_state_ = s;
      swa_state_.params.clear();
      swa_state_.opt.clear();
    }
    swa_update(swa_state_.params, s.params, swa_n_++);
    if (swag_) swag_->collect(s.params);
    swa_state_.running = bn_->run(swa_state_.params, s.running, train);
    swa_state_.epoch = s.epoch;
    swa_state_.step = s.step;
    report("swa", swa_state_, swa_top1_);
    if (swag_ && evaluate) {
      // Logits averaged over swagSamples samples, each with its own BN statistics; each rank
      // scores its share of the batches (the BN recompute runs on every rank).
      data::Loader ld(test, ev_.batch(), false, 0);
      ld.set_skip_bad(test.streamed() && data::pipeline_options().skip_bad);  // left out
      ld.start_epoch(0);
      const int64_t nb = ld.num_batches();
      std::vector<Tensor> sum(static_cast<size_t>(nb));
      for (int j = 0; j < c_.swagSamples; ++j) {
        std::vector<Tensor> p = swag_->sample(static_cast<uint64_t>(c_.seed) * 1000003 + j);
        std::vector<Tensor> run = bn_->run(p, s.running, train);
        for (int64_t b = 0; b < nb; ++b) {
          if (!split_.mine(b)) continue;
          Tensor x, y;
          ld.batch(b, x, y);
          Tensor z = ev_.logits(p, run, x);
          if (j == 0)
            sum[b] = z;
          else
            for (int64_t e = 0; e < z.numel(); ++e) sum[b].data<float>()[e] += z.data<float>()[e];
        }
      }
      Scorer sc;
      sc.classes = ev_.manifest().outputs.at(0).shape.back();
      std::vector<double> batch_loss(static_cast<size_t>(nb), 0.0);
      for (int64_t b = 0; b < nb; ++b) {
        if (!split_.mine(b)) continue;
        Tensor x, y;
        int64_t n = ld.batch(b, x, y);
        for (float& v : sum[b].span<float>()) v /= static_cast<float>(c_.swagSamples);
        batch_loss[size_t(b)] = sc.score(sum[b], y, n);
      }
      swag_top1_ = fold_split(sc, batch_loss, split_).top1;
      line += fmt::format("  swag top-1 {:.2f}%", 100 * *swag_top1_);
      if (!run_dir.empty()) {
        SafeTensors st;
        st.tensors = swag_->tensors(table_);
        st.metadata["net"] = net_name;
        st.metadata["models"] = std::to_string(swag_->count());
        write_safetensors((fs::path(run_dir) / "swag.safetensors").string(), st);
      }
    }
  }
  return line;
}

std::vector<std::pair<std::string, std::optional<double>>> Averages::top1_columns() const {
  std::vector<std::pair<std::string, std::optional<double>>> v;
  const std::string score = evaluate_ ? score_column_ : "top1";
  if (ema_) v.emplace_back("ema_" + score, ema_top1_);
  if (swa_) v.emplace_back("swa_" + score, swa_top1_);
  if (swag_) v.emplace_back("swag_top1", swag_top1_);
  return v;
}

}  // namespace netspec::train
