// The `xla` backend: the module's StableHLO text is compiled by a PJRT plugin (XLA's CPU plugin,
// or CUDA's on a GPU machine) and run on its devices. Executables are compiled once per (module
// text, options) and kept for the backend's lifetime; a session keeps its state in device
// buffers, so a training step moves only the batch in and the loss/metrics out.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/error.h"
#include "exec/backend.h"
#include "exec/compile_cache.h"
#include "exec/pjrt/pjrt_client.h"
#include "hlo/text/printer.h"

namespace netspec::exec::pjrt {
namespace {

// One compiled executable, destroyed through the client that made it.
struct Compiled {
  std::shared_ptr<Client> client;
  PJRT_LoadedExecutable* exe = nullptr;
  size_t num_outputs = 0;
  ~Compiled() {
    try {
      client->destroy(exe);
    } catch (const Error&) {  // a destructor: the plugin's complaint cannot be acted on
    }
  }
};

class PjrtBackend;

// The module text with `{tf.aliasing_output = K : i32}` on each state argument of @main whose
// output K has its type: XLA then reuses (donates) the state buffer for the new state, so a step
// holds one copy of the parameters and optimizer state instead of two.
std::string with_aliasing(const std::string& text, const hlo::Func& f,
                          const std::vector<Feedback>& fb) {
  const std::string head = "func.func public @main(";
  size_t pos = text.find(head);
  if (pos == std::string::npos) return text;
  pos += head.size();
  // Argument i spans [starts[i], ends[i]): split at top-level commas up to the closing ')'.
  std::vector<size_t> ends;
  int depth = 0;
  size_t i = pos;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<' || c == '(' || c == '{' || c == '[') ++depth;
    if (c == '>' || c == ']' || c == '}') --depth;
    if (c == ')' && depth-- == 0) break;
    if (c == ',' && depth == 0) ends.push_back(i);
  }
  if (i == text.size() || ends.size() + 1 != f.num_args()) return text;  // unexpected: no aliasing
  ends.push_back(i);
  std::vector<std::string> attr(f.num_args());
  for (const Feedback& x : fb)
    if (x.output != Feedback::kKeep && f.arg(x.input)->type == f.result_types.at(x.output))
      attr[x.input] = fmt::format(" {{tf.aliasing_output = {} : i32}}", x.output);
  std::string out = text.substr(0, pos);
  size_t from = pos;
  for (size_t a = 0; a < ends.size(); ++a) {
    out.append(text, from, ends[a] - from);
    out += attr[a];
    from = ends[a];
  }
  out.append(text, from, std::string::npos);
  return out;
}

class PjrtExecutable final : public Executable {
 public:
  PjrtExecutable(PjrtBackend& be, std::shared_ptr<const hlo::Module> m);
  std::vector<Tensor> run(std::string_view entry, const std::vector<Tensor>& inputs) override;
  std::vector<std::vector<Tensor>> run_replicated(
      std::string_view entry, const std::vector<std::vector<Tensor>>& inputs) override;
  // A multi-node client (BackendOptions::num_nodes > 1): this process's replica of a module
  // compiled for every node's devices; XLA's own collectives (NCCL) carry its all_reduce, so
  // `comm` only gives the replica count.
  std::vector<Tensor> run_as_replica(std::string_view entry, const std::vector<Tensor>& inputs,
                                     Communicator& comm, int replica_id) override;
  std::unique_ptr<Session> open_session(std::string_view entry, std::vector<Feedback> feedback,
                                        int replicas) override;

  const hlo::Func& main(std::string_view entry) const;
  std::shared_ptr<Compiled> compiled(int replicas);
  // The executable for `replicas` devices with the state arguments donated (see with_aliasing).
  std::shared_ptr<Compiled> compiled_donating(const hlo::Func& f, const std::vector<Feedback>& fb,
                                              int replicas);
  Client& client();
  // Output k of `f` read back to the host.
  Tensor read(const hlo::Func& f, size_t k, PJRT_Buffer* b);

 private:
  PjrtBackend& be_;
  std::shared_ptr<const hlo::Module> module_;
  std::string text_;
  std::map<int, std::shared_ptr<Compiled>> by_replicas_;
};

class PjrtBackend final : public Backend {
 public:
  explicit PjrtBackend(const BackendOptions& o) {
    const std::string path = find_plugin(o.pjrt_plugin);
    int devices = o.devices;
    if (devices <= 0)
      if (const char* v = std::getenv("NETSPEC_PJRT_DEVICES"); v && *v) devices = std::atoi(v);
    // cpu_device_count is the CPU plugin's option; other plugins (CUDA) get no create options.
    const bool cpu = path.find("cpu") != std::string::npos;
    if (o.num_nodes > 1 && cpu)
      fail("xla",
           "node {} of {}: XLA's CPU PJRT plugin ({}) has no cross-process collectives (its "
           "PJRT_Client_Create takes only cpu_device_count, process_id and asynchronous and "
           "never calls the key-value callbacks); across processes use --backend cpu (Gloo), "
           "or a GPU plugin (--pjrt-plugin .../xla_cuda_plugin.so)",
           o.node_id, o.num_nodes, path);
    multi_node_ = o.num_nodes > 1;
    client_ = std::make_shared<Client>(path, cpu ? std::max(devices, 1) : 0,
                                       Distributed{o.node_id, o.num_nodes, o.kv});
    std::string dir = o.compile_cache;
    if (dir.empty())
      if (const char* v = std::getenv("NETSPEC_COMPILE_CACHE"); v && *v) dir = v;
    if (dir.empty()) dir = default_compile_cache_dir();
    if (!dir.empty() && dir != "off") disk_ = std::make_unique<DiskCompileCache>(dir);
  }
  std::map<std::string, int64_t> counters() const override {
    std::lock_guard lock(mu_);
    return counts_;
  }
  std::string name() const override { return "xla"; }
  std::unique_ptr<Executable> load(std::shared_ptr<const hlo::Module> module) override {
    if (!module) fail("xla", "load got a null module");
    return std::make_unique<PjrtExecutable>(*this, std::move(module));
  }
  Client& client() { return *client_; }
  bool multi_node() const { return multi_node_; }

  // Compiled once per (options, text) for this backend's client. A multi-node client: replica
  // r on global device r (ordered by id: node-major), the module spanning every node.
  std::shared_ptr<Compiled> compile(const std::string& text, int replicas) {
    std::vector<int64_t> ids;
    if (multi_node_) {
      const auto& all = client_->global_devices();
      if (static_cast<size_t>(replicas) != all.size())
        fail("xla", "{} replicas across nodes need one per device of every node ({} devices)",
             replicas, all.size());
      for (PJRT_Device* d : all) ids.push_back(client_->device_id(d));
    } else if (replicas > 1) {
      if (static_cast<size_t>(replicas) > client_->devices().size())
        fail("xla",
             "{} replicas need {} devices (the {} client has {}; CPU plugin: raise "
             "NETSPEC_PJRT_DEVICES)",
             replicas, replicas, client_->platform(), client_->devices().size());
      for (int r = 0; r < replicas; ++r) ids.push_back(client_->device_id(static_cast<size_t>(r)));
    }
    const std::string options = compile_options_proto(replicas, ids);
    std::string key = options + '\0' + text;
    std::lock_guard lock(mu_);
    auto& slot = cache_[key];
    if (!slot) {
      auto c = std::make_shared<Compiled>();
      c->client = client_;
      c->exe = load_or_compile(text, options, key);
      c->num_outputs = client_->num_outputs(c->exe);
      slot = std::move(c);
    }
    return slot;
  }

 private:
  // From the disk cache when it holds a loadable entry for (compiler, options, text), else
  // compiled (and stored there). Called with mu_ held.
  PJRT_LoadedExecutable* load_or_compile(const std::string& text, const std::string& options,
                                         const std::string& key) {
    if (!disk_) {
      ++counts_["compile"];
      return client_->compile(text, options);
    }
    const std::string disk_key = client_->identity() + '\0' + key;
    if (std::optional<std::string> bytes = disk_->load(disk_key)) {
      try {
        PJRT_LoadedExecutable* e = client_->deserialize(*bytes);
        ++counts_["disk_hit"];
        return e;
      } catch (const Error& x) {
        std::cerr << fmt::format("[xla] compile cache: ignoring {} ({}); recompiling\n",
                                 disk_->path(disk_key), x.what());
      }
      ++counts_["disk_corrupt"];
    } else if (std::filesystem::exists(disk_->path(disk_key))) {
      ++counts_["disk_corrupt"];  // load() warned
    }
    ++counts_["disk_miss"];
    ++counts_["compile"];
    PJRT_LoadedExecutable* e = client_->compile(text, options);
    std::string bytes;
    try {
      bytes = client_->serialize(e);
    } catch (const Error& x) {
      std::cerr << fmt::format("[xla] compile cache: not cached ({})\n", x.what());
      return e;
    }
    disk_->store(disk_key, bytes);
    return e;
  }

  std::shared_ptr<Client> client_;
  bool multi_node_ = false;
  std::unique_ptr<DiskCompileCache> disk_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Compiled>> cache_;
  std::map<std::string, int64_t> counts_;
};

PjrtExecutable::PjrtExecutable(PjrtBackend& be, std::shared_ptr<const hlo::Module> m)
    : be_(be), module_(std::move(m)), text_(hlo::print_module(*module_)) {}

Client& PjrtExecutable::client() { return be_.client(); }

const hlo::Func& PjrtExecutable::main(std::string_view entry) const {
  const hlo::Func& f = *module_->entry(entry);
  if (f.name != "main")
    fail("xla", "PJRT runs the module's @main (got entry @{}; rename it to main)", f.name);
  return f;
}

std::shared_ptr<Compiled> PjrtExecutable::compiled(int replicas) {
  auto& c = by_replicas_[replicas];
  if (!c) c = be_.compile(text_, replicas);
  return c;
}

std::shared_ptr<Compiled> PjrtExecutable::compiled_donating(const hlo::Func& f,
                                                            const std::vector<Feedback>& fb,
                                                            int replicas) {
  return be_.compile(with_aliasing(text_, f, fb), replicas);
}

Tensor PjrtExecutable::read(const hlo::Func& f, size_t k, PJRT_Buffer* b) {
  const hlo::Type& t = f.result_types.at(k);
  return client().to_host(b, t.dtype(), t.shape());
}

std::vector<Tensor> PjrtExecutable::run(std::string_view entry, const std::vector<Tensor>& inputs) {
  return run_replicated(entry, {inputs}).at(0);
}

std::vector<std::vector<Tensor>> PjrtExecutable::run_replicated(
    std::string_view entry, const std::vector<std::vector<Tensor>>& inputs) {
  const hlo::Func& f = main(entry);
  if (inputs.empty()) fail("xla", "run_replicated needs at least one replica");
  for (const auto& in : inputs) check_inputs(f, in);
  auto c = compiled(static_cast<int>(inputs.size()));
  std::vector<std::vector<Buffer>> held(inputs.size());
  std::vector<std::vector<PJRT_Buffer*>> args(inputs.size());
  for (size_t d = 0; d < inputs.size(); ++d)
    for (const Tensor& t : inputs[d]) {
      held[d].push_back(client().to_device(t, d));
      args[d].push_back(held[d].back().get());
    }
  auto outs = client().execute(c->exe, args, c->num_outputs, {});
  std::vector<std::vector<Tensor>> res(inputs.size());
  for (size_t d = 0; d < outs.size(); ++d)
    for (size_t k = 0; k < outs[d].size(); ++k) res[d].push_back(read(f, k, outs[d][k].get()));
  return res;
}

std::vector<Tensor> PjrtExecutable::run_as_replica(std::string_view entry,
                                                   const std::vector<Tensor>& inputs,
                                                   Communicator& comm, int replica_id) {
  if (!be_.multi_node()) return Executable::run_as_replica(entry, inputs, comm, replica_id);
  const hlo::Func& f = main(entry);
  check_inputs(f, inputs);
  Client& cl = client();
  const int world = comm.num_replicas();
  if (cl.devices().size() != 1)
    fail("xla", "replica {} of {}: one device per process expected (this node drives {})",
         replica_id, world, cl.devices().size());
  auto c = compiled(world);
  // The compiled assignment puts replica r on global device r: it must be this node's device.
  const int mine = cl.device_id(size_t{0});
  const int want = cl.device_id(cl.global_devices().at(static_cast<size_t>(replica_id)));
  if (mine != want)
    fail("xla", "replica {} runs on device {} but this process drives device {}", replica_id, want,
         mine);
  std::vector<Buffer> held;
  std::vector<std::vector<PJRT_Buffer*>> args(1);
  for (const Tensor& t : inputs) {
    held.push_back(cl.to_device(t, 0));
    args[0].push_back(held.back().get());
  }
  auto outs = cl.execute(c->exe, args, c->num_outputs, {});
  std::vector<Tensor> res;
  for (size_t k = 0; k < outs.at(0).size(); ++k) res.push_back(read(f, k, outs[0][k].get()));
  return res;
}

// State in device buffers, one copy per replica on the replica's device: fed-back outputs
// replace the state buffers after each step; only the other inputs are transferred in and the
// other outputs read back.
class PjrtSession final : public Session {
 public:
  PjrtSession(PjrtExecutable& exe, const hlo::Func& f, std::vector<Feedback> fb, int replicas)
      : exe_(exe), f_(f), fb_(std::move(fb)) {
    if (replicas < 1 || replicas > kMaxReplicas)
      fail("session", "replica count must be in 1..{} (got {})", kMaxReplicas, replicas);
    for (const Feedback& x : fb_)
      if (x.input >= f_.num_args() ||
          (x.output != Feedback::kKeep && x.output >= f_.result_types.size()))
        fail("session", "feedback input {} <- output {} is outside @{} ({} inputs, {} outputs)",
             x.input, x.output, f_.name, f_.num_args(), f_.result_types.size());
    state_.resize(static_cast<size_t>(replicas));
    for (auto& r : state_) r.resize(fb_.size());
    compiled_ = exe.compiled_donating(f_, fb_, replicas);
  }

  void set_state(size_t input, const Tensor& t) override {
    const hlo::Type& ty = f_.arg(input)->type;
    if (t.dtype() != ty.dtype() || t.shape() != ty.shape())
      fail("session", "state input {} expects {}, got {}", input, ty.str(), t.type_str());
    const size_t k = slot(input);
    for (size_t d = 0; d < state_.size(); ++d) state_[d][k] = exe_.client().to_device(t, d);
  }

  std::vector<Tensor> step(const std::vector<Tensor>& inputs) override {
    return step_one_replica(state_.size(), inputs);
  }

  std::vector<std::vector<Tensor>> step_replicated(
      const std::vector<std::vector<Tensor>>& inputs) override {
    const size_t nd = state_.size();
    if (inputs.size() != nd)
      fail("session", "step of {} replicas got inputs for {}", nd, inputs.size());
    std::vector<Buffer> held;
    std::vector<std::vector<PJRT_Buffer*>> args(nd);
    for (size_t d = 0; d < nd; ++d) {
      if (inputs[d].size() != f_.num_args())
        fail("session", "@{} takes {} inputs, got {}", f_.name, f_.num_args(), inputs[d].size());
      args[d].assign(inputs[d].size(), nullptr);
      for (size_t k = 0; k < fb_.size(); ++k) {
        if (!state_[d][k]) fail("session", "state input {} was never set", fb_[k].input);
        args[d][fb_[k].input] = state_[d][k].get();
      }
      for (size_t i = 0; i < inputs[d].size(); ++i) {
        if (args[d][i]) continue;
        const hlo::Type& ty = f_.arg(i)->type;
        if (inputs[d][i].dtype() != ty.dtype() || inputs[d][i].shape() != ty.shape())
          fail("run", "argument {} (%arg{}) expects {}, got {}", i, i, ty.str(),
               inputs[d][i].type_str());
        held.push_back(exe_.client().to_device(inputs[d][i], d));
        args[d][i] = held.back().get();
      }
    }
    auto outs = exe_.client().execute(compiled_->exe, args, compiled_->num_outputs, {});
    std::vector<bool> fed(compiled_->num_outputs, false);
    for (const Feedback& x : fb_)
      if (x.output != Feedback::kKeep) fed.at(x.output) = true;
    std::vector<std::vector<Tensor>> res(nd);
    for (size_t d = 0; d < nd; ++d) {
      std::vector<Buffer>& o = outs.at(d);
      res[d].resize(o.size());
      for (size_t k = 0; k < o.size(); ++k)
        if (!fed[k]) res[d][k] = exe_.read(f_, k, o[k].get());
      for (size_t k = 0; k < fb_.size(); ++k)
        if (fb_[k].output != Feedback::kKeep) state_[d][k] = std::move(o[fb_[k].output]);
    }
    return res;
  }

  Tensor state(size_t input) override {
    const size_t k = slot(input);
    if (!state_[0][k]) fail("session", "state input {} was never set", input);
    const hlo::Type& ty = f_.arg(input)->type;
    return exe_.client().to_host(state_[0][k].get(), ty.dtype(), ty.shape());
  }

 private:
  size_t slot(size_t input) const {
    for (size_t k = 0; k < fb_.size(); ++k)
      if (fb_[k].input == input) return k;
    fail("session", "input {} is not a state input", input);
  }
  PjrtExecutable& exe_;
  const hlo::Func& f_;
  std::vector<Feedback> fb_;
  std::vector<std::vector<Buffer>> state_;  // [replica (= device)][state slot]
  std::shared_ptr<Compiled> compiled_;
};

std::unique_ptr<Session> PjrtExecutable::open_session(std::string_view entry,
                                                      std::vector<Feedback> feedback,
                                                      int replicas) {
  return std::make_unique<PjrtSession>(*this, main(entry), std::move(feedback), replicas);
}

}  // namespace

NETSPEC_REGISTER_BACKEND(xla, [](const BackendOptions& o) -> std::unique_ptr<Backend> {
  return std::make_unique<PjrtBackend>(o);
})

}  // namespace netspec::exec::pjrt
