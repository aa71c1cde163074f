// The training loop (see trainer.h). Inputs and outputs of the emitted modules are bound by the
// manifest's roles (docs/abi.md), so the loop does not hard-code the optimizer's state layout.
#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/error.h"
#include "core/safetensors.h"
#include "data/loader.h"
#include "emit/emit.h"
#include "exec/backend.h"

namespace netspec::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

std::shared_ptr<const hlo::Module> share(std::unique_ptr<hlo::Module> m) {
  return std::shared_ptr<const hlo::Module>(std::move(m));
}

// Host cross-entropy and top-1 over the first n rows of logits [B, C].
void score(const Tensor& logits, const Tensor& y, int64_t n, double& loss, int64_t& correct) {
  const int64_t c = logits.shape()[1];
  const float* l = logits.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float* r = l + i * c;
    int64_t arg = 0;
    for (int64_t j = 1; j < c; ++j)
      if (r[j] > r[arg]) arg = j;
    double z = 0;
    for (int64_t j = 0; j < c; ++j) z += std::exp(static_cast<double>(r[j] - r[arg]));
    int32_t t = y.data<int32_t>()[i];
    loss += std::log(z) - static_cast<double>(r[t] - r[arg]);  // logsumexp - logit_t
    correct += arg == t;
  }
}

struct State {
  std::vector<Tensor> params, opt, running;  // running: mean, var per BN, interleaved
  std::vector<std::string> opt_names, running_names;
  int epoch = 0;  // completed epochs
  int64_t step = 0;
};

SafeTensors to_checkpoint(const ParamTable& t, const State& s, const std::string& net) {
  SafeTensors st;
  for (size_t i = 0; i < s.params.size(); ++i) st.tensors.emplace_back(t.params[i].name, s.params[i]);
  for (size_t i = 0; i < s.opt.size(); ++i) st.tensors.emplace_back(s.opt_names[i], s.opt[i]);
  for (size_t i = 0; i < s.running.size(); ++i)
    st.tensors.emplace_back(s.running_names[i], s.running[i]);
  st.metadata = {{"net", net}, {"epoch", std::to_string(s.epoch)},
                 {"step", std::to_string(s.step)}, {"format", "netspec-checkpoint-1"}};
  return st;
}

void load_into(const SafeTensors& st, const std::string& name, Tensor& dst, const std::string& path) {
  const Tensor& src = st.at(name);
  if (src.shape() != dst.shape() || src.dtype() != dst.dtype())
    fail("train", "{}: tensor '{}' does not match the net (got {}, expected {})", path, name,
         src.type_str(), dst.type_str());
  dst = src.clone();
}

}  // namespace

TrainResult run_training(const SpecFile& spec, const Splits& data, const TrainOptions& o) {
  const TrainConfig c = spec.train.value_or(TrainConfig{});
  validate(c);
  const NetSpec& net = spec.net;
  const ParamTable table = build_param_table(net);
  const int64_t batch = c.batchSize;
  if (data.train.x.shape().size() < 2 ||
      Shape(data.train.x.shape().begin() + 1, data.train.x.shape().end()) != table.input)
    fail("train", "dataset sample shape does not match the net's input (got {}, expected {})",
         data.train.x.type_str(), shape_str(table.input));

  emit::EmitOptions eo = emit::EmitOptions::from_train(c, batch);
  emit::Emitted step_mod = emit::emit_module(net, ModuleKind::train_step, eo);
  emit::Emitted eval_mod = emit::emit_module(net, ModuleKind::eval, eo);
  auto backend = exec::make_backend(o.backend);
  auto step_exe = backend->load(share(std::move(step_mod.module)));
  auto eval_exe = backend->load(share(std::move(eval_mod.module)));
  const emit::Manifest& sm = step_mod.manifest;
  const emit::Manifest& em = eval_mod.manifest;

  State s;
  s.params = init_params(table, c.init, static_cast<uint64_t>(c.seed));
  for (const auto& ti : sm.inputs)
    if (ti.role == "optimizer_state") {
      s.opt.emplace_back(ti.dtype, ti.shape);
      s.opt_names.push_back(ti.name);
    }
  for (const auto& ti : em.inputs)
    if (ti.role == "bn_running_stat") {
      Tensor r(ti.dtype, ti.shape);
      // mean, var interleaved: var starts at 1.
      if (s.running.size() % 2 == 1)
        for (float& v : r.span<float>()) v = 1.f;
      s.running.push_back(std::move(r));
      s.running_names.push_back(ti.name);
    }

  const std::string ckpt = o.run_dir.empty() ? "" : (fs::path(o.run_dir) / "last.safetensors").string();
  if (!o.run_dir.empty()) fs::create_directories(o.run_dir);
  if (!ckpt.empty() && fs::exists(ckpt)) {
    SafeTensors st = read_safetensors(ckpt);
    for (size_t i = 0; i < s.params.size(); ++i) load_into(st, table.params[i].name, s.params[i], ckpt);
    for (size_t i = 0; i < s.opt.size(); ++i) load_into(st, s.opt_names[i], s.opt[i], ckpt);
    for (size_t i = 0; i < s.running.size(); ++i) load_into(st, s.running_names[i], s.running[i], ckpt);
    s.epoch = std::stoi(st.metadata.at("epoch"));
    s.step = std::stoll(st.metadata.at("step"));
    if (o.log) *o.log << "resuming " << ckpt << " after epoch " << s.epoch << " (step " << s.step << ")\n";
  }

  data::Loader train_ld(data.train, batch, true, static_cast<uint64_t>(c.seed));
  data::Loader test_ld(data.test, batch, false, 0);
  const int64_t spe = train_ld.num_batches();
  TrainResult res;
  res.first_epoch = s.epoch + 1;
  const double momentum = c.bnMomentum;

  for (int epoch = s.epoch + 1; epoch <= c.epochs; ++epoch) {
    auto t0 = Clock::now();
    double step_secs = 0, loss_sum = 0, lr = 0;
    train_ld.start_epoch(epoch - 1);
    for (int64_t b = 0; b < spe; ++b) {
      Tensor x, y;
      train_ld.batch(b, x, y);
      lr = learning_rate(c, s.step, spe);
      std::vector<Tensor> in;
      size_t pi = 0, si = 0;
      for (const auto& ti : sm.inputs) {
        if (ti.role == "param") in.push_back(s.params[pi++]);
        else if (ti.role == "optimizer_state") in.push_back(s.opt[si++]);
        else if (ti.role == "input") in.push_back(x);
        else if (ti.role == "label") in.push_back(y);
        else if (ti.name == "lr") in.push_back(Tensor::scalar_f32(static_cast<float>(lr)));
        else if (ti.name == "step")
          in.push_back(Tensor::from<int64_t>(DType::kI32, {}, {s.step + 1}));
        else fail("train", "train_step input '{}' has unknown role {}", ti.name, ti.role);
      }
      auto ts = Clock::now();
      std::vector<Tensor> out = step_exe->run("main", in);
      step_secs += secs(ts);
      pi = si = 0;
      size_t bi = 0;
      double loss = 0;
      for (size_t k = 0; k < sm.outputs.size(); ++k) {
        const auto& ti = sm.outputs[k];
        if (ti.role == "param") s.params[pi++] = std::move(out[k]);
        else if (ti.role == "optimizer_state") s.opt[si++] = std::move(out[k]);
        else if (ti.role == "loss") loss = out[k].as_double(0);
        else if (ti.role == "bn_batch_stat") {
          // PyTorch: running = (1-m)·running + m·batch, with the unbiased variance n/(n-1).
          const bool var = bi % 2 == 1;
          const double n = static_cast<double>(ti.count);
          const double corr = var && n > 1 ? n / (n - 1) : 1.0;
          float* r = s.running[bi].data<float>();
          const float* bs = out[k].data<float>();
          for (int64_t j = 0; j < out[k].numel(); ++j)
            r[j] = static_cast<float>((1 - momentum) * r[j] + momentum * corr * bs[j]);
          ++bi;
        }
      }
      if (!std::isfinite(loss))
        fail("train", "loss is {} at step {} (epoch {}); the last checkpoint is kept", loss,
             s.step + 1, epoch);
      loss_sum += loss;
      ++s.step;
    }

    // Evaluation: every test sample once (the padded tail's extra rows are not scored).
    double test_loss = 0;
    int64_t correct = 0, seen = 0;
    test_ld.start_epoch(0);
    for (int64_t b = 0; b < test_ld.num_batches(); ++b) {
      Tensor x, y;
      int64_t n = test_ld.batch(b, x, y);
      std::vector<Tensor> in;
      size_t pi = 0, ri = 0;
      for (const auto& ti : em.inputs) {
        if (ti.role == "param") in.push_back(s.params[pi++]);
        else if (ti.role == "bn_running_stat") in.push_back(s.running[ri++]);
        else if (ti.role == "input") in.push_back(x);
        else fail("train", "eval input '{}' has unknown role {}", ti.name, ti.role);
      }
      std::vector<Tensor> out = eval_exe->run("main", in);
      score(out.at(0), y, n, test_loss, correct);
      seen += n;
    }
    s.epoch = epoch;
    EpochMetrics m;
    m.epoch = epoch;
    m.step = s.step;
    m.lr = lr;
    m.train_loss = loss_sum / static_cast<double>(spe);
    m.test_loss = seen ? test_loss / static_cast<double>(seen) : 0;
    m.test_acc = seen ? static_cast<double>(correct) / static_cast<double>(seen) : 0;
    m.seconds = secs(t0);
    m.ms_per_step = 1e3 * step_secs / static_cast<double>(spe);
    res.epochs.push_back(m);
    if (o.log)
      *o.log << fmt::format(
          "epoch {}/{}  train loss {:.4f}  test loss {:.4f}  test acc {:.2f}%  ({:.1f} s, {:.2f} "
          "ms/step, lr {:.3g})\n",
          epoch, c.epochs, m.train_loss, m.test_loss, 100 * m.test_acc, m.seconds, m.ms_per_step,
          lr);

    if (!o.run_dir.empty()) {
      write_safetensors(ckpt, to_checkpoint(table, s, net.name));
      nlohmann::ordered_json cfg;
      SpecFile resolved = spec;
      resolved.train = c;
      cfg["spec"] = nlohmann::ordered_json::parse(dump_spec(resolved));
      cfg["epoch"] = s.epoch;
      cfg["step"] = s.step;
      cfg["backend"] = o.backend;
      write_file_atomic((fs::path(o.run_dir) / "config.json").string(), cfg.dump(2) + "\n");
      const std::string csv = (fs::path(o.run_dir) / "metrics.csv").string();
      bool fresh = !fs::exists(csv);
      std::ofstream f(csv, std::ios::app);
      if (fresh) f << "epoch,step,lr,train_loss,test_loss,test_acc,seconds,ms_per_step\n";
      f << fmt::format("{},{},{:.6g},{:.6f},{:.6f},{:.6f},{:.3f},{:.3f}\n", m.epoch, m.step, m.lr,
                       m.train_loss, m.test_loss, m.test_acc, m.seconds, m.ms_per_step);
    }
  }
  return res;
}

}  // namespace netspec::train
