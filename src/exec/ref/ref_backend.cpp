// The `ref` backend: runs functions with the reference interpreter; replicated runs use one
// thread per replica sharing a ReplicaComm for all_reduce.
#include <exception>
#include <thread>

#include "exec/backend.h"
#include "exec/ref/interpreter.h"

namespace netspec::exec {
namespace {

class RefExecutable final : public Executable {
 public:
  explicit RefExecutable(std::shared_ptr<const hlo::Module> m) : module_(std::move(m)) {}

  std::vector<Tensor> run(std::string_view entry, const std::vector<Tensor>& inputs) override {
    const hlo::Func& f = *module_->entry(entry);
    check_inputs(f, inputs);
    ref::RunContext ctx;
    return ref::run_func(f, inputs, ctx);
  }

  std::vector<Tensor> run_as_replica(std::string_view entry, const std::vector<Tensor>& inputs,
                                     Communicator& comm, int replica_id) override {
    const hlo::Func& f = *module_->entry(entry);
    check_inputs(f, inputs);
    ref::RunContext ctx;
    ctx.replica_id = replica_id;
    ctx.comm = &comm;
    return ref::run_func(f, inputs, ctx);
  }

  std::vector<std::vector<Tensor>> run_replicated(
      std::string_view entry, const std::vector<std::vector<Tensor>>& inputs) override {
    const hlo::Func& f = *module_->entry(entry);
    for (const auto& in : inputs) check_inputs(f, in);
    return run_on_replicas(static_cast<int>(inputs.size()), [&](int r, ReplicaComm& comm) {
      ref::RunContext ctx;
      ctx.replica_id = r;
      ctx.comm = &comm;
      return ref::run_func(f, inputs[static_cast<size_t>(r)], ctx);
    });
  }

 private:
  std::shared_ptr<const hlo::Module> module_;
};

class RefBackend final : public Backend {
 public:
  std::string name() const override { return "ref"; }
  std::unique_ptr<Executable> load(std::shared_ptr<const hlo::Module> module) override {
    if (!module) fail("ref", "load got a null module");
    return std::make_unique<RefExecutable>(std::move(module));
  }
};

}  // namespace

NETSPEC_REGISTER_BACKEND(ref, [](const BackendOptions&) -> std::unique_ptr<Backend> {
  return std::make_unique<RefBackend>();
})

}  // namespace netspec::exec
