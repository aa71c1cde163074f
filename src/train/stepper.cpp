// The update step: fused train_step, or gradient accumulation over micro-batches (see stepper.h).
#include "train/stepper.h"

#include <cmath>

#include "core/error.h"
#include "core/hash.h"
#include "emit/emit.h"
#include "emit/loss_grad.h"
#include "layers/param_table.h"
#include "train/multi_stepper.h"

namespace netspec::train {

struct Stepper::Module {
  emit::Manifest manifest;
  std::unique_ptr<exec::Executable> exe;
  Module(const NetSpec& net, const ParamTable& t, ModuleKind kind, const emit::EmitOptions& eo,
         exec::Backend& be) {
    emit::Emitted e = emit::emit_module(net, t, kind, eo);
    manifest = e.manifest;
    exe = be.load(std::shared_ptr<const hlo::Module>(std::move(e.module)));
  }
};

struct Stepper::Modules {
  std::unique_ptr<Module> fused, forward, vjp;
  std::unique_ptr<exec::Executable> loss_grad;  // (logits, labels, w) -> (loss, w·dloss/dlogits)
};

Stepper::Stepper(const NetSpec& net, const TrainConfig& c, exec::Backend& be,
                 const ParamTable* table, const DataParallel& dp, int steps_per_call)
    : net_(net),
      table_(table ? *table : build_param_table(net)),
      config_(c),
      backend_(be),
      dp_(dp),
      accum_(c.gradAccumSteps),
      batch_(c.batchSize),
      seed_(static_cast<uint64_t>(c.seed)),
      bn_momentum_(c.bnMomentum) {
  if (dp_.replicas > 1 && batch_ % dp_.replicas != 0)
    fail("train", "batchSize {} does not divide into {} replicas (a shard each)", batch_,
         dp_.replicas);
  if (accum_ > 1) {
    // Accumulation runs each replica's shard through modules emitted for one replica.
    if (dp_.replicas > 1 && c.syncBN)
      fail("train",
           "syncBN with gradAccumSteps > 1 and {} replicas: each micro-batch normalises every "
           "replica's shard alone (ghost BN, as the seed's accumulation does); set syncBN=false "
           "or gradAccumSteps=1",
           dp_.replicas);
    optimizer_ = std::make_unique<Module>(net, table_, ModuleKind::optimizer,
                                          emit::EmitOptions::from_train(c, batch_), be);
  }
  if (steps_per_call > 1) {
    // The K-step module wraps the fused one-replica step; the state lives on the host.
    if (accum_ > 1)
      fail("train", "{} steps per call with gradAccumSteps {} (set gradAccumSteps to 1)",
           steps_per_call, accum_);
    if (dp_.replicas > 1 || dp_.multi_process())
      fail("train", "{} steps per call with {} replicas (data parallel runs one step per call)",
           steps_per_call, dp_.replicas);
    multi_ = std::make_unique<MultiStepper>(net_, table_, c, be, batch_, steps_per_call);
    return;  // the one-step full-batch module is never run: not compiled
  }
  modules(batch_);
}

int Stepper::steps_per_call() const { return multi_ ? multi_->k() : 1; }

std::vector<double> Stepper::steps(TrainState& s, const std::vector<Tensor>& xs,
                                   const std::vector<Tensor>& ys, const std::vector<double>& lrs,
                                   int64_t first_step) {
  if (!multi_) fail("train", "steps() needs steps_per_call > 1 (got 1)");
  for (const Tensor& x : xs)
    if (x.rank() < 1 || x.shape()[0] != batch_)
      fail("train", "steps() takes full batches of {} (got {})", batch_, x.type_str());
  MultiStepper::Result r = multi_->run(s, xs, ys, lrs, first_step);
  correct_ = r.correct.empty() ? std::vector<int64_t>(xs.size(), -1) : r.correct;
  counted_.clear();
  for (const Tensor& y : ys) counted_.push_back(y.numel());
  const emit::Manifest& sm = multi_->step_manifest();
  for (size_t j = 0; j < r.bn_stats.size(); ++j) {  // running-stat EMA step by step, in order
    size_t bi = 0, q = 0;
    for (const auto& ti : sm.outputs)
      if (ti.role == "bn_batch_stat")
        update_running(s, bi, ti, r.bn_stats[j].at(q++), bn_momentum_);
  }
  return r.losses;
}

// The modules at batch n: emitted and compiled on first use (a tail batch: once per run).
const Stepper::Modules& Stepper::modules(int64_t n) {
  auto it = by_batch_.find(n);
  if (it != by_batch_.end()) return *it->second;
  if (n < 1 || n > batch_)
    fail("train", "micro-batch of {} samples (expected 1..{}, the batchSize)", n, batch_);
  if (n % dp_.replicas != 0)
    fail("train", "batch of {} samples does not divide into {} replicas", n, dp_.replicas);
  emit::EmitOptions eo = emit::EmitOptions::from_train(config_, n / dp_.replicas);
  // Fused: one module for all replicas (all_reduce inside). Accumulation: per-shard modules, the
  // gradients summed on the host (and across processes) before the optimizer module.
  eo.replicas = accum_ <= 1 ? dp_.replicas : 1;
  eo.masked_forward = accum_ > 1;  // dropPath / dropout: forward and vjp take the keep masks
  auto m = std::make_unique<Modules>();
  if (accum_ <= 1) {
    m->fused = std::make_unique<Module>(net_, table_, ModuleKind::train_step, eo, backend_);
  } else {
    m->forward = std::make_unique<Module>(net_, table_, ModuleKind::forward, eo, backend_);
    m->vjp = std::make_unique<Module>(net_, table_, ModuleKind::vjp, eo, backend_);
    const hlo::Type logits = hlo::Type::tensor(m->forward->manifest.outputs.at(0).dtype,
                                               m->forward->manifest.outputs.at(0).shape);
    m->loss_grad = backend_.load(emit::emit_loss_grad(net_, logits, eo));
  }
  if (n != batch_ && multi_) {  // the tail of a K-steps-per-call run: its one-step module
    check_tail_manifest(multi_->step_manifest(), m->fused->manifest, batch_, n);
  } else if (n != batch_) {
    const Modules& full = modules(batch_);
    if (m->fused)  // data parallel: the manifests hold the per-replica shard sizes
      check_tail_manifest(full.fused->manifest, m->fused->manifest, batch_ / dp_.replicas,
                          n / dp_.replicas);
    const int64_t rb = batch_ / dp_.replicas, rn = n / dp_.replicas;  // per-shard rows
    if (m->forward) check_tail_manifest(full.forward->manifest, m->forward->manifest, rb, rn);
    if (m->vjp) check_tail_manifest(full.vjp->manifest, m->vjp->manifest, rb, rn);
  }
  return *by_batch_.emplace(n, std::move(m)).first->second;
}

std::vector<int64_t> Stepper::compiled_batches() const {
  std::vector<int64_t> v;
  for (const auto& [n, m] : by_batch_) v.push_back(n);
  return v;
}

void check_tail_manifest(const emit::Manifest& full, const emit::Manifest& tail, int64_t b,
                         int64_t n) {
  auto side = [&](const std::vector<emit::TensorInfo>& f, const std::vector<emit::TensorInfo>& t,
                  const char* what) {
    if (f.size() != t.size())
      fail("train", "{} at batch {} has {} {}s (expected {} as at batch {})", full.module, n,
           t.size(), what, f.size(), b);
    for (size_t i = 0; i < f.size(); ++i) {
      const emit::TensorInfo &x = f[i], &y = t[i];
      const bool batched = x.role == "input" || x.role == "label" || x.role == "mask" ||
                           x.role == "output" || x.role == "cotangent" || x.name == "d.x";
      Shape want = x.shape;
      if (batched && !want.empty() && want[0] == b) want[0] = n;
      if (x.name != y.name || x.role != y.role || x.dtype != y.dtype || x.rate != y.rate ||
          want != y.shape)
        fail("train",
             "{} at batch {}: {} {} is '{}' {} {} {} (expected '{}' {} {} {} from batch {})",
             full.module, n, what, i, y.name, y.role, dtype_name(y.dtype), shape_str(y.shape),
             x.name, x.role, dtype_name(x.dtype), shape_str(want), b);
    }
  };
  side(full.inputs, tail.inputs, "input");
  side(full.outputs, tail.outputs, "output");
}

Stepper::~Stepper() = default;

namespace {
// acc[i] += g (acc[i] = a copy of g when acc has no entry i yet); f32 gradients. The copy: an
// executable may return one buffer for two equal outputs (the biases of the two BNs summed by a
// residual block have the same gradient), and adding in place into a shared buffer would add
// every later micro-batch twice.
void add_into(std::vector<Tensor>& acc, size_t i, Tensor g) {
  if (i == acc.size()) {
    acc.push_back(g.clone());
    return;
  }
  float* a = acc[i].data<float>();
  const float* d = g.data<float>();
  for (int64_t e = 0; e < g.numel(); ++e) a[e] += d[e];
}
}  // namespace

Tensor draw_keep_mask(const emit::TensorInfo& ti, uint64_t seed, int64_t step, size_t index,
                      int64_t micro) {
  const double p = ti.rate;
  if (!(p >= 0 && p < 1))
    fail("train", "mask '{}' drop rate must be in [0, 1) (got {})", ti.name, p);
  if (ti.dtype != DType::kF32 && ti.dtype != DType::kF64)
    fail("train", "mask '{}' dtype (got {}, expected f32 or f64)", ti.name, dtype_name(ti.dtype));
  Tensor m(ti.dtype, ti.shape);
  const double keep = 1 / (1 - p);
  uint64_t base = splitmix64(splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(step)) ^ index);
  if (micro > 0) base = splitmix64(base ^ splitmix64(static_cast<uint64_t>(micro)));
  for (int64_t e = 0; e < m.numel(); ++e) {
    // u in [0, 1) from the top 53 bits; keep with probability 1 - p.
    const double u =
        static_cast<double>(splitmix64(base ^ splitmix64(static_cast<uint64_t>(e))) >> 11) *
        0x1.0p-53;
    const double v = u >= p ? keep : 0.0;
    if (ti.dtype == DType::kF32)
      m.data<float>()[e] = static_cast<float>(v);
    else
      m.data<double>()[e] = v;
  }
  return m;
}

const emit::Manifest& Stepper::state_manifest() const {
  if (multi_) return multi_->step_manifest();
  return optimizer_ ? optimizer_->manifest : by_batch_.at(batch_)->fused->manifest;
}

void Stepper::update_running(TrainState& s, size_t& bi, const emit::TensorInfo& ti,
                             const Tensor& batch, double m) {
  // PyTorch: running = (1-m)·running + m·batch, with the unbiased variance n/(n-1).
  const bool var = bi % 2 == 1;
  const double n = static_cast<double>(ti.count);
  const double corr = var && n > 1 ? n / (n - 1) : 1.0;
  float* r = s.running.at(bi).data<float>();
  const float* b = batch.data<float>();
  for (int64_t j = 0; j < batch.numel(); ++j)
    r[j] = static_cast<float>((1 - m) * r[j] + m * corr * b[j]);
  ++bi;
}

int64_t count_correct(const Tensor& logits, const Tensor& labels) {
  const Shape& s = logits.shape();
  if (s.size() < 2 || labels.numel() * s[1] != logits.numel() || labels.dtype() != DType::kI32)
    fail("train",
         "counting correct predictions needs logits [B, C, ...] and i32 labels [B, ...] "
         "(got {} and {})",
         logits.type_str(), labels.type_str());
  const int64_t c = s[1], inner = labels.numel() / s[0];
  const int32_t* y = labels.data<int32_t>();
  int64_t hits = 0;
  for (int64_t b = 0; b < s[0]; ++b)
    for (int64_t i = 0; i < inner; ++i) {
      // Element (b, j, i) of the row-major logits is at (b·C + j)·inner + i.
      // A NaN anywhere in the row counts as wrong (the in-graph max is NaN there too).
      int64_t best = 0;
      double top = logits.as_double(b * c * inner + i);
      bool nan = std::isnan(top);
      for (int64_t j = 1; j < c; ++j) {
        const double v = logits.as_double((b * c + j) * inner + i);
        nan = nan || std::isnan(v);
        if (v > top) top = v, best = j;
      }
      hits += !nan && best == y[b * inner + i];
    }
  return hits;
}

double class_ce_and_grad(const Tensor& logits, const Tensor& labels, double eps, double scale,
                         Tensor& grad) {
  if (logits.shape().size() != 2 || labels.shape().size() != 1)
    fail("train", "gradAccumSteps > 1 needs logits [B, C] and labels [B] (got {} and {})",
         logits.type_str(), labels.type_str());
  const int64_t b = logits.shape().at(0), c = logits.shape().at(1);
  grad = Tensor(logits.dtype(), logits.shape());
  const float* z = logits.data<float>();
  const int32_t* y = labels.data<int32_t>();
  float* g = grad.data<float>();
  double loss = 0;
  std::vector<double> p(static_cast<size_t>(c));
  for (int64_t i = 0; i < b; ++i) {
    const float* r = z + i * c;
    float mx = r[0];
    for (int64_t j = 1; j < c; ++j) mx = std::max(mx, r[j]);
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += p[j] = std::exp(static_cast<double>(r[j] - mx));
    const double lse = std::log(sum);
    for (int64_t j = 0; j < c; ++j) {
      // q = (1-ε)·onehot + ε/C;  loss_i = -Σ q log p;  dloss_i/dz = p - q.
      const double q = (j == y[i] ? 1 - eps : 0) + eps / static_cast<double>(c);
      loss -= q * (static_cast<double>(r[j] - mx) - lse);
      g[i * c + j] = static_cast<float>((p[j] / sum - q) * scale);
    }
  }
  return loss / static_cast<double>(b);
}

// Opens the session on the first full-batch step (state from s) and sets it again from s when
// a different TrainState is passed (s is then the truth).
void Stepper::bind(TrainState& s, const Module& fm) {
  if (session_ && bound_ == &s) return;
  if (!session_) {
    const emit::Manifest& m = fm.manifest;
    std::vector<size_t> p_in, o_in;
    for (size_t k = 0; k < m.inputs.size(); ++k) {
      if (m.inputs[k].role == "param") p_in.push_back(k);
      if (m.inputs[k].role == "optimizer_state") o_in.push_back(k);
    }
    size_t pi = 0, si = 0;
    for (size_t k = 0; k < m.outputs.size(); ++k) {
      const std::string& role = m.outputs[k].role;
      if (role == "param" && pi < p_in.size()) {
        feedback_.push_back({p_in[pi], k});
        state_src_.emplace_back('p', pi++);
      } else if (role == "optimizer_state" && si < o_in.size()) {
        feedback_.push_back({o_in[si], k});
        state_src_.emplace_back('o', si++);
      }
    }
    if (pi != p_in.size() || si != o_in.size())
      fail("train", "train_step returns {} of {} params and {} of {} optimizer states", pi,
           p_in.size(), si, o_in.size());
    session_ = fm.exe->open_session("main", feedback_, dp_.multi_process() ? 1 : dp_.replicas);
  }
  for (size_t k = 0; k < feedback_.size(); ++k) {
    const auto& [kind, i] = state_src_[k];
    session_->set_state(feedback_[k].input, kind == 'p' ? s.params.at(i) : s.opt.at(i));
  }
  bound_ = &s;
  stale_ = false;
}

void Stepper::sync(TrainState& s) {
  if (!session_ || !stale_ || bound_ != &s) return;
  for (size_t k = 0; k < feedback_.size(); ++k) {
    const auto& [kind, i] = state_src_[k];
    (kind == 'p' ? s.params : s.opt).at(i) = session_->state(feedback_[k].input);
  }
  stale_ = false;
}

double Stepper::step(TrainState& s, const std::vector<Tensor>& xs, const std::vector<Tensor>& ys,
                     double lr, int64_t step) {
  if (xs.empty() || xs.size() > static_cast<size_t>(accum_) || ys.size() != xs.size())
    fail("train", "step needs 1..{} micro-batches with labels (got {} and {})", accum_, xs.size(),
         ys.size());
  const Tensor lr_t = Tensor::scalar_f32(static_cast<float>(lr));
  const Tensor step_t = Tensor::from<int64_t>(DType::kI32, {}, {step});
  if (multi_ && xs[0].shape().at(0) == batch_)  // one update through the K-step module
    return steps(s, xs, ys, {lr}, step).at(0);
  if (accum_ <= 1) {
    // Full batches keep the state in the backend's session (one copy per replica thread or
    // device); tail batches and replicas in several processes feed it from the host state.
    const bool in_session = xs[0].shape().at(0) == batch_ && !dp_.multi_process();
    const Module& fm = *modules(xs[0].shape().at(0)).fused;
    if (in_session)
      bind(s, fm);
    else
      sync(s);  // the tail module is fed from the host state
    const emit::Manifest& sm = fm.manifest;
    std::vector<Tensor> in;
    size_t pi = 0, si = 0, mi = 0;
    for (const auto& ti : sm.inputs) {
      if (ti.role == "param")
        in.push_back(s.params[pi++]);
      else if (ti.role == "optimizer_state")
        in.push_back(s.opt[si++]);
      else if (ti.role == "input")
        in.push_back(xs[0]);
      else if (ti.role == "label")
        in.push_back(ys[0]);
      else if (ti.name == "lr")
        in.push_back(lr_t);
      else if (ti.name == "step")
        in.push_back(step_t);
      else if (ti.role == "mask")  // [n] / [n, F] at this (global) batch, sharded with x
        in.push_back(draw_keep_mask(global_info(ti, dp_.replicas), seed_, step, mi++));
      else
        fail("train", "train_step input '{}' has unknown role {}", ti.name, ti.role);
    }
    std::vector<Tensor> out;
    if (in_session && dp_.replicas > 1)  // replica 0's outputs (all replicas' params agree)
      out = std::move(
          session_->step_replicated(shard_inputs(sm, in, dp_.replicas, 0, dp_.replicas)).at(0));
    else if (in_session)
      out = session_->step(in);
    else if (dp_.replicas > 1)
      out = run_data_parallel(*fm.exe, sm, in, dp_);
    else
      out = fm.exe->run("main", in);
    pi = si = 0;
    size_t bi = 0;
    double loss = 0;
    correct_ = {-1};
    counted_ = {ys[0].numel()};
    for (size_t k = 0; k < sm.outputs.size(); ++k) {
      const auto& ti = sm.outputs[k];
      if (ti.role == "param" && !in_session)
        s.params[pi++] = std::move(out[k]);
      else if (ti.role == "optimizer_state" && !in_session)
        s.opt[si++] = std::move(out[k]);
      else if (ti.role == "loss")
        loss = out[k].as_double(0);
      else if (ti.role == "metric" && ti.name == "correct")  // summed over the replicas
        correct_[0] = static_cast<int64_t>(out[k].as_double(0));
      else if (ti.role == "bn_batch_stat")  // ti.count is this batch's n·H·W
        update_running(s, bi, ti, out[k], bn_momentum_);
    }
    if (in_session) {
      stale_ = true;
    } else if (session_ && bound_ == &s) {
      bound_ = nullptr;  // the next full step sets the session from s
    }
    return loss;
  }

  return accumulate(s, xs, ys, lr_t, step_t, step);
}

// Gradient accumulation: Σ_k Σ_r vjp(P, x_kr, dz_kr) over the micro-batches k and the replica
// shards r (rows [r·n_k/R, (r+1)·n_k/R) of x_k), dz_kr = (n_k/R / N)·∂loss_kr/∂z from the
// loss-gradient module, N = Σ n_k: the gradient of the mean over the N samples of this update,
// the same as one batch of N (K·R·b) up to f32 summation order. Replica threads run here one
// after another; processes sum their replicas' gradients and the loss across the group before the
// optimizer module (one all_reduce per update).
double Stepper::accumulate(TrainState& s, const std::vector<Tensor>& xs,
                           const std::vector<Tensor>& ys, const Tensor& lr_t, const Tensor& step_t,
                           int64_t step) {
  const int reps = dp_.replicas;
  const bool procs = dp_.multi_process();
  const int first = procs ? dp_.rank * dp_.local : 0, count = procs ? dp_.local : reps;
  double total = 0;
  for (const Tensor& x : xs) total += static_cast<double>(x.shape().at(0));
  const double scale = 1.0 / total;
  // BN running stats: K micro-batch updates with m_K, (1 - m_K)^K = 1 - m, decay as much as one
  // update with m (the seed's m^(1/K) in TF's decay convention); off: m on every micro-batch.
  const double bn_m = config_.compensateBNMomentum
                          ? 1 - std::pow(1 - bn_momentum_, 1.0 / static_cast<double>(xs.size()))
                          : bn_momentum_;
  // Keep masks (dropPath / dropout): micro-batch k's are drawn at its n_k rows from (seed, step,
  // mask index, k) and replica r takes its rows, so they do not depend on how many replicas or
  // processes share the micro-batch (micro-batch 0 draws what a fused step would).
  std::vector<std::vector<Tensor>> masks(xs.size());
  for (size_t k = 0; k < xs.size(); ++k) {
    size_t mi = 0;
    for (const auto& ti : modules(xs[k].shape().at(0)).forward->manifest.inputs)
      if (ti.role == "mask") {
        emit::TensorInfo g = ti;
        g.shape.at(0) *= reps;
        masks[k].push_back(draw_keep_mask(g, seed_, step, mi++, static_cast<int64_t>(k)));
      }
  }
  // Each replica sums its micro-batches; the replicas are then summed in replica order, so 2
  // processes x 1 replica give the bits of 1 process x 2 replicas.
  std::vector<Tensor> grads, mine;
  double loss = 0;
  const bool counts = losses::counts_correct(config_.lossKind);
  int64_t correct = 0, counted = 0;
  for (int r = first; r < first + count; ++r) {
    mine.clear();
    double loss_r = 0;
    for (size_t k = 0; k < xs.size(); ++k) {
      const Modules& mk = modules(xs[k].shape().at(0));
      const double nk = static_cast<double>(xs[k].shape().at(0) / reps);  // rows per shard
      const Tensor xr = reps > 1 ? shard_rows(xs[k], reps, r) : xs[k];
      const Tensor yr = reps > 1 ? shard_rows(ys[k], reps, r) : ys[k];
      std::vector<Tensor> in;
      size_t pi = 0, mi = 0;
      for (const auto& ti : mk.forward->manifest.inputs) {
        if (ti.role == "param")
          in.push_back(s.params[pi++]);
        else if (ti.role == "input")
          in.push_back(xr);
        else if (ti.role == "mask")
          in.push_back(reps > 1 ? shard_rows(masks[k].at(mi++), reps, r) : masks[k].at(mi++));
        else
          fail("train", "forward input '{}' has unknown role {}", ti.name, ti.role);
      }
      std::vector<Tensor> fo = mk.forward->exe->run("main", in);
      if (counts) {
        correct += count_correct(fo[0], yr);
        counted += yr.numel();
      }
      size_t bi = 0;
      for (size_t j = 0; j < fo.size() && r == 0; ++j)  // replica 0's shard (as DDP's buffers)
        if (mk.forward->manifest.outputs[j].role == "bn_batch_stat")
          update_running(s, bi, mk.forward->manifest.outputs[j], fo[j], bn_m);
      // The shard's mean loss, weighted (n_k/R) / N into the update's mean.
      std::vector<Tensor> lg = mk.loss_grad->run(
          "main", {fo[0], yr, Tensor::scalar_f32(static_cast<float>(nk * scale))});
      loss_r += lg[0].as_double(0) * (nk * scale);
      in.push_back(std::move(lg[1]));  // vjp inputs: P, x, masks, ybar
      std::vector<Tensor> g = mk.vjp->exe->run("main", in);
      size_t gi = 0;
      for (size_t j = 0; j < g.size(); ++j)
        if (mk.vjp->manifest.outputs[j].name != "d.x") add_into(mine, gi++, std::move(g[j]));
    }
    for (size_t gi = 0; gi < mine.size(); ++gi) add_into(grads, gi, std::move(mine[gi]));
    loss += loss_r;
  }
  if (procs) {
    // The loss and the counts ride along (f64: exact for counts below 2^53).
    grads.push_back(Tensor::from<double>(
        DType::kF64, {3}, {loss, static_cast<double>(correct), static_cast<double>(counted)}));
    grads = sum_over_processes(grads, dp_);
    loss = grads.back().as_double(0);
    correct = static_cast<int64_t>(grads.back().as_double(1));
    counted = static_cast<int64_t>(grads.back().as_double(2));
    grads.pop_back();
    if (!s.running.empty()) s.running = from_rank0(s.running, dp_);  // replica 0's stats
  }
  correct_ = {counts ? correct : -1};
  counted_ = {counted};
  std::vector<Tensor> in;
  size_t pi = 0, gi = 0, si = 0;
  for (const auto& ti : optimizer_->manifest.inputs) {
    if (ti.role == "param")
      in.push_back(s.params[pi++]);
    else if (ti.role == "gradient")
      in.push_back(grads.at(gi++));
    else if (ti.role == "optimizer_state")
      in.push_back(s.opt[si++]);
    else if (ti.name == "lr")
      in.push_back(lr_t);
    else if (ti.name == "step")
      in.push_back(step_t);
    else
      fail("train", "optimizer input '{}' has unknown role {}", ti.name, ti.role);
  }
  std::vector<Tensor> out = optimizer_->exe->run("main", in);
  pi = si = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    const auto& ti = optimizer_->manifest.outputs[k];
    if (ti.role == "param")
      s.params[pi++] = std::move(out[k]);
    else if (ti.role == "optimizer_state")
      s.opt[si++] = std::move(out[k]);
  }
  return loss;
}

}  // namespace netspec::train
