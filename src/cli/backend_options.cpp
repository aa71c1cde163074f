// --backend and the engine options shared by run, bench, train, eval and predict.
#include <fmt/format.h>

#include "cli/commands.h"

namespace netspec::cli {

void add_backend_options(CLI::App* cmd, std::string& backend, exec::BackendOptions& opts) {
  cmd->add_option("--backend", backend,
                  "executor: cpu (fast, default), ref (the oracle), xla (a PJRT plugin: XLA CPU, "
                  "or CUDA on a GPU machine), iree (IREE's tools; not for train)")
      ->capture_default_str();
  cmd->add_option("--pjrt-plugin", opts.pjrt_plugin,
                  "xla: the PJRT plugin .so (default $NETSPEC_PJRT_PLUGIN, else the one "
                  "scripts/install-engines.sh installed)");
  cmd->add_option("--pjrt-devices", opts.devices,
                  "xla on the CPU plugin: in-process devices (for --replicas; default 1)");
}

}  // namespace netspec::cli
