#include "exec/backend.h"

#include <fmt/format.h>

#include <atomic>
#include <map>

namespace netspec::exec {
namespace {

std::map<std::string, BackendFactory, std::less<>>& registry() {
  static std::map<std::string, BackendFactory, std::less<>> r;
  return r;
}

// State held as host tensors, one copy per replica: each step fills the state inputs, runs
// (replicated when R > 1), keeps the fed outputs. Fed-back state is donated to the run (moved
// in, so the executor may update it in place); a step that fails before the run starts (bad
// inputs) keeps it, one that fails later loses it, and the next step or state() says so until
// set_state sets it again.
class HostSession final : public Session {
 public:
  HostSession(Executable& exe, std::string entry, std::vector<Feedback> fb, int replicas)
      : exe_(exe),
        entry_(std::move(entry)),
        fb_(std::move(fb)),
        state_(static_cast<size_t>(replicas), std::vector<Tensor>(fb_.size())),
        gen_(fb_.size(), 0),
        set_(fb_.size(), false),
        lost_(fb_.size(), false) {
    if (replicas < 1 || replicas > kMaxReplicas)
      fail("session", "replica count must be in 1..{} (got {})", kMaxReplicas, replicas);
  }

  void set_state(size_t input, const Tensor& t) override {
    const size_t k = slot(input);
    for (auto& r : state_) r[k] = t;
    gen_[k] = next_kept_generation();
    set_[k] = true;
    lost_[k] = false;
  }

  std::vector<Tensor> step(const std::vector<Tensor>& inputs) override {
    return step_one_replica(state_.size(), inputs);
  }

  std::vector<std::vector<Tensor>> step_replicated(
      const std::vector<std::vector<Tensor>>& inputs) override {
    if (inputs.size() != state_.size())
      fail("session", "step of {} replicas got inputs for {}", state_.size(), inputs.size());
    std::vector<std::vector<Tensor>> in = inputs;
    std::vector<bool> donate;
    std::vector<uint64_t> kept;  // kKeep inputs: their set_state's generation
    for (size_t k = 0; k < fb_.size(); ++k) {
      check_set(k);
      for (size_t r = 0; r < in.size(); ++r)
        if (fb_[k].input >= in[r].size())
          fail("session", "state input {} is past the {} inputs given", fb_[k].input, in[r].size());
      if (fb_[k].output == Feedback::kKeep) {
        if (kept.size() <= fb_[k].input) kept.resize(fb_[k].input + 1, 0);
        kept[fb_[k].input] = gen_[k];
        continue;
      }
      if (donate.size() <= fb_[k].input) donate.resize(fb_[k].input + 1, false);
      donate[fb_[k].input] = true;
    }
    for (size_t r = 0; r < in.size(); ++r)
      for (size_t k = 0; k < fb_.size(); ++k)
        in[r][fb_[k].input] =
            fb_[k].output == Feedback::kKeep ? state_[r][k] : std::move(state_[r][k]);
    std::vector<std::vector<Tensor>> out;
    try {
      if (in.size() == 1)
        out.push_back(exe_.run_kept(entry_, in[0], donate, kept));
      else
        out = exe_.run_replicated_kept(entry_, in, donate, kept);
      for (size_t r = 0; r < out.size(); ++r) {
        for (size_t k = 0; k < fb_.size(); ++k)
          if (fb_[k].output != Feedback::kKeep) state_[r][k] = std::move(out[r].at(fb_[k].output));
        for (const Feedback& f : fb_)
          if (f.output != Feedback::kKeep) out[r].at(f.output) = Tensor();
      }
    } catch (...) {
      for (size_t r = 0; r < in.size(); ++r)
        for (size_t k = 0; k < fb_.size(); ++k) {
          if (fb_[k].output == Feedback::kKeep || state_[r][k].defined()) continue;
          Tensor& t = in[r][fb_[k].input];
          if (t.defined())
            state_[r][k] = std::move(t);  // not taken yet: the run never started
          else
            lost_[k] = true;
        }
      throw;
    }
    return out;
  }

  // A copy: the caller's tensor must not share storage with state a later step updates in place.
  Tensor state(size_t input) override {
    const size_t k = slot(input);
    check_set(k);
    return state_.at(0).at(k).clone();
  }

 private:
  void check_set(size_t k) const {
    if (lost_[k])
      fail("session", "state input {} was lost when a step failed (set it again)", fb_[k].input);
    if (!set_[k]) fail("session", "state input {} was never set", fb_[k].input);
  }
  size_t slot(size_t input) const {
    for (size_t k = 0; k < fb_.size(); ++k)
      if (fb_[k].input == input) return k;
    fail("session", "input {} is not a state input", input);
  }
  Executable& exe_;
  std::string entry_;
  std::vector<Feedback> fb_;
  std::vector<std::vector<Tensor>> state_;  // [replica][state slot]
  std::vector<uint64_t> gen_;               // per state slot: its last set_state's generation
  std::vector<bool> set_, lost_;
};

}  // namespace

std::unique_ptr<Session> Executable::open_session(std::string_view entry,
                                                  std::vector<Feedback> feedback, int replicas) {
  return std::make_unique<HostSession>(*this, std::string(entry), std::move(feedback), replicas);
}

std::vector<Tensor> Executable::run_donating(std::string_view entry, std::vector<Tensor>& inputs,
                                             const std::vector<bool>& /*donate*/) {
  return run(entry, inputs);
}

uint64_t next_kept_generation() {
  static std::atomic<uint64_t> next{0};
  return ++next;
}

std::vector<Tensor> Executable::run_kept(std::string_view entry, std::vector<Tensor>& inputs,
                                         const std::vector<bool>& donate,
                                         const std::vector<uint64_t>& /*kept*/) {
  return run_donating(entry, inputs, donate);
}

std::vector<std::vector<Tensor>> Executable::run_replicated_kept(
    std::string_view entry, std::vector<std::vector<Tensor>>& inputs,
    const std::vector<bool>& donate, const std::vector<uint64_t>& /*kept*/) {
  return run_replicated_donating(entry, inputs, donate);
}

std::vector<std::vector<Tensor>> Executable::run_replicated_donating(
    std::string_view entry, std::vector<std::vector<Tensor>>& inputs,
    const std::vector<bool>& /*donate*/) {
  return run_replicated(entry, inputs);
}

std::vector<std::vector<Tensor>> Session::step_replicated(
    const std::vector<std::vector<Tensor>>& inputs) {
  if (inputs.size() != 1)
    fail("session", "this session runs one replica (got inputs for {})", inputs.size());
  return {step(inputs[0])};
}

std::vector<Tensor> Session::step_one_replica(size_t replicas, const std::vector<Tensor>& inputs) {
  if (replicas != 1)
    fail("session", "a session of {} replicas steps with step_replicated", replicas);
  return std::move(step_replicated({inputs}).at(0));
}

BackendRegistrar::BackendRegistrar(const char* name, BackendFactory factory) {
  registry()[name] = std::move(factory);
}

std::vector<std::string> backend_names() {
  std::vector<std::string> v;
  for (const auto& [n, f] : registry()) v.push_back(n);
  return v;
}

std::string backend_unavailable_reason(std::string_view name) {
  if (registry().count(name)) return "";
  if (name == "xla")
    return fmt::format(
        "netspec was built without PJRT support (the xla backend needs "
        "xla/pjrt/c/pjrt_c_api.h at build time: run scripts/install-engines.sh, then "
        "reconfigure with cmake); this build has {}",
        fmt::join(backend_names(), ", "));
  return fmt::format("unknown backend '{}' (known: {})", name, fmt::join(backend_names(), ", "));
}

std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& opts) {
  auto it = registry().find(name);
  if (it != registry().end()) return it->second(opts);
  fail("backend", "{}", backend_unavailable_reason(name));
}

void check_inputs(const hlo::Func& f, const std::vector<Tensor>& inputs) {
  if (inputs.size() != f.num_args())
    fail("run", "function @{} takes {} argument(s), got {}", f.name, f.num_args(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const hlo::Type& t = f.arg(i)->type;
    if (!t.is_tensor()) fail("run", "argument {} (%arg{}) has non-tensor type {}", i, i, t.str());
    if (inputs[i].dtype() != t.dtype() || inputs[i].shape() != t.shape())
      fail("run", "argument {} (%arg{}) expects {}, got {}", i, i, t.str(), inputs[i].type_str());
  }
}

}  // namespace netspec::exec
