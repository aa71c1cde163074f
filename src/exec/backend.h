// The executor interface. A Backend loads a verified Module into an Executable, which runs one
// function on host tensors and returns host tensors. `ref` is the definition (obvious per-element
// code, the oracle); `cpu` is the fast one (planned, arena-backed, oneDNN for contractions); `xla`
// runs the printed module through a PJRT plugin (exec/pjrt); `iree` through IREE's tools.
// Replicated runs execute N copies (threads, or N devices); all_reduce combines across them.
// A Session keeps a function's state (e.g. parameters) where the backend holds it between calls.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "exec/kv_store.h"
#include "exec/replicas.h"
#include "hlo/ir.h"

namespace netspec::exec {

// Output `output` of one call becomes input `input` of the next; output kKeep: the input is
// state that no output replaces (e.g. parameters during evaluation). A kept input is read as it
// was at set_state: the caller must not write into its storage while the session uses it (set it
// again instead), so a backend may keep forms derived from it between steps (the cpu executor's
// convolution weights reordered into the kernel's layout).
struct Feedback {
  static constexpr size_t kKeep = static_cast<size_t>(-1);
  size_t input = 0, output = 0;
};

// A stateful run of one function. The fed-back inputs ("state") live in the backend between
// calls (host tensors for ref/cpu, device buffers for xla): only the other inputs go in and only
// the other outputs come out per step. State must be set once before the first step.
class Session {
 public:
  virtual ~Session() = default;
  // Sets state input `input` (one of the feedback inputs) from the host.
  virtual void set_state(size_t input, const Tensor& t) = 0;
  // One call. `inputs` has one entry per function argument; entries at state inputs are ignored
  // (pass empty Tensors). Returns one entry per output; the fed-back ones are empty Tensors.
  virtual std::vector<Tensor> step(const std::vector<Tensor>& inputs) = 0;
  // The current value of state input `input`, copied to the host (replica 0's copy).
  virtual Tensor state(size_t input) = 0;
  // A session opened for R > 1 replicas runs them all in one call: inputs[r] is replica r's
  // argument list (state entries ignored); returns each replica's outputs (fed-back ones empty).
  // Every replica keeps its own copy of the state (xla: on its device); set_state sets them all.
  virtual std::vector<std::vector<Tensor>> step_replicated(
      const std::vector<std::vector<Tensor>>& inputs);

 protected:
  // step() of a session built on step_replicated: its one replica's step (refused, naming
  // step_replicated, when the session holds `replicas` != 1).
  std::vector<Tensor> step_one_replica(size_t replicas, const std::vector<Tensor>& inputs);
};

class Executable {
 public:
  virtual ~Executable() = default;
  // Runs `entry` on one replica. Inputs are checked against the signature: a missing, extra or
  // mistyped input throws an Error naming the argument and its expected type.
  virtual std::vector<Tensor> run(std::string_view entry, const std::vector<Tensor>& inputs) = 0;
  // Runs `entry` as inputs.size() replicas in parallel threads (replica id = index).
  virtual std::vector<std::vector<Tensor>> run_replicated(
      std::string_view entry, const std::vector<std::vector<Tensor>>& inputs) = 0;
  // Runs `entry` as replica `replica_id` of the comm.num_replicas() replicas meeting in `comm`
  // (the others in other processes: dist::GlooComm). Backends without it refuse by name.
  virtual std::vector<Tensor> run_as_replica(std::string_view entry,
                                             const std::vector<Tensor>& inputs, Communicator& comm,
                                             int replica_id);
  // Runs `entry` as replicas rank·L .. rank·L + L-1 (L = inputs.size()) of the
  // outer.num_replicas()·L replicas: L threads here (TwoLevelComm), the other processes' replicas
  // meeting through `outer` (one member per process, this one `rank`). The default runs
  // run_as_replica on the L threads (backends with per-call state override it).
  virtual std::vector<std::vector<Tensor>> run_as_replicas(
      std::string_view entry, const std::vector<std::vector<Tensor>>& inputs, Communicator& outer,
      int rank);
  // run() / run_replicated() that may overwrite the inputs flagged in `donate` (one flag per
  // argument; a shorter list donates nothing past its end) and hand their storage back as
  // results — XLA's buffer donation: a training step's parameters and optimizer state are then
  // updated in place instead of into fresh memory. A donated input is taken out of `inputs`
  // (left empty) once the inputs are checked and the run starts; an error before that (a
  // mistyped input) leaves them as they were. A donated input whose storage another tensor
  // shares is copied first, so that tensor never sees a write. The defaults ignore `donate`.
  virtual std::vector<Tensor> run_donating(std::string_view entry, std::vector<Tensor>& inputs,
                                           const std::vector<bool>& donate);
  virtual std::vector<std::vector<Tensor>> run_replicated_donating(
      std::string_view entry, std::vector<std::vector<Tensor>>& inputs,
      const std::vector<bool>& donate);
  // run_donating() / run_replicated_donating() where kept[k] != 0 says input k holds the same
  // contents as in every earlier call given the same kept[k] (a Session's kKeep state, numbered
  // by next_kept_generation() at each set_state): a backend may reuse what it derived from such
  // an input. The defaults ignore `kept`.
  virtual std::vector<Tensor> run_kept(std::string_view entry, std::vector<Tensor>& inputs,
                                       const std::vector<bool>& donate,
                                       const std::vector<uint64_t>& kept);
  virtual std::vector<std::vector<Tensor>> run_replicated_kept(
      std::string_view entry, std::vector<std::vector<Tensor>>& inputs,
      const std::vector<bool>& donate, const std::vector<uint64_t>& kept);
  // A session over `entry` run as `replicas` replicas (all_reduce meets across them); the default
  // keeps the state as host tensors and calls run_donating() / run_replicated_donating(), the
  // fed-back state donated.
  virtual std::unique_ptr<Session> open_session(std::string_view entry,
                                                std::vector<Feedback> feedback, int replicas = 1);
};

// A process-wide fresh, nonzero number for Executable::run_kept's `kept` (one per set_state).
uint64_t next_kept_generation();

// Options a backend may read; each ignores what it does not use.
struct BackendOptions {
  std::string pjrt_plugin;  // xla: plugin .so (else $NETSPEC_PJRT_PLUGIN, else the install dir)
  int devices = 0;  // xla on a CPU plugin: in-process devices (0: 1, or $NETSPEC_PJRT_DEVICES)
  // xla: compiled executables kept on disk; "" the default directory (default_compile_cache_dir,
  // $NETSPEC_COMPILE_CACHE when set), "off" none, else that directory.
  std::string compile_cache;
  // xla across processes (GPU plugins): this process is node `node_id` of `num_nodes`, the
  // plugin's multi-node client meeting the others through `kv` (the run's rendezvous store).
  // The CPU plugin refuses num_nodes > 1 (it has no cross-process collectives).
  int node_id = 0, num_nodes = 1;
  KvStore* kv = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::unique_ptr<Executable> load(std::shared_ptr<const hlo::Module> module) = 0;
  // Named event counts for tests and reports (xla: compiles, disk cache hits, misses, corrupt
  // entries); empty for backends that count nothing.
  virtual std::map<std::string, int64_t> counters() const { return {}; }
};

using BackendFactory = std::function<std::unique_ptr<Backend>(const BackendOptions&)>;

// Each backend registers itself (NETSPEC_REGISTER_BACKEND in its own file), so this library
// depends on none of them; binaries link the backends whole-archive (CMake: netspec_backends).
struct BackendRegistrar {
  BackendRegistrar(const char* name, BackendFactory factory);
};
#define NETSPEC_REGISTER_BACKEND(name, factory) \
  static const ::netspec::exec::BackendRegistrar backend_registrar_##name{#name, factory};

// A registered backend by name ("ref", "cpu", "xla", "iree"); throws an Error listing the
// registered names otherwise (and saying so when xla was left out of the build).
std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& opts = {});
// Registered names, sorted.
std::vector<std::string> backend_names();
// Why `name` cannot be made in this build ("" when it is registered): what make_backend throws,
// so commands can refuse a bad --backend before loading anything.
std::string backend_unavailable_reason(std::string_view name);

// Checks inputs against a function signature ("[run] argument 1 (%arg1) expects tensor<4xf32>,
// got tensor<3xf32>"). Shared by the backends.
void check_inputs(const hlo::Func& f, const std::vector<Tensor>& inputs);

}  // namespace netspec::exec
