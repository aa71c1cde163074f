// The executor interface. A Backend loads a verified Module into an Executable, which runs one
// function on host tensors and returns host tensors. `ref` is the definition (obvious per-element
// code, the oracle); `cpu` is the fast one (planned, arena-backed, oneDNN for contractions).
// Replicated runs execute N copies on N threads; all_reduce combines across them.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "exec/replicas.h"
#include "hlo/ir.h"

namespace netspec::exec {

class Executable {
 public:
  virtual ~Executable() = default;
  // Runs `entry` on one replica. Inputs are checked against the signature: a missing, extra or
  // mistyped input throws an Error naming the argument and its expected type.
  virtual std::vector<Tensor> run(std::string_view entry, const std::vector<Tensor>& inputs) = 0;
  // Runs `entry` as inputs.size() replicas in parallel threads (replica id = index).
  virtual std::vector<std::vector<Tensor>> run_replicated(std::string_view entry,
                                                          const std::vector<std::vector<Tensor>>& inputs) = 0;
  // Runs `entry` as replica `replica_id` of the comm.num_replicas() replicas meeting in `comm`
  // (the others in other processes: dist::GlooComm). Backends without it refuse by name.
  virtual std::vector<Tensor> run_as_replica(std::string_view entry,
                                             const std::vector<Tensor>& inputs, Communicator& comm,
                                             int replica_id);
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::unique_ptr<Executable> load(std::shared_ptr<const hlo::Module> module) = 0;
};

// "ref" or "cpu"; throws an Error listing the known names otherwise.
std::unique_ptr<Backend> make_backend(std::string_view name);
std::unique_ptr<Backend> make_ref_backend();
std::unique_ptr<Backend> make_cpu_backend();

// Checks inputs against a function signature ("[run] argument 1 (%arg1) expects tensor<4xf32>,
// got tensor<3xf32>"). Shared by the backends.
void check_inputs(const hlo::Func& f, const std::vector<Tensor>& inputs);

}  // namespace netspec::exec
