// --backend and the engine options shared by run, bench, train, eval and predict.
#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"

namespace netspec::cli {

void add_backend_options(CLI::App* cmd, std::string& backend, exec::BackendOptions& opts) {
  cmd->add_option("--backend", backend,
                  "executor: cpu (fast, default), ref (the oracle), xla (a PJRT plugin: XLA CPU, "
                  "or CUDA on a GPU machine), iree (IREE's tools; train runs K steps per call)")
      ->capture_default_str()
      // Checked while parsing: a backend this build lacks is refused before data is loaded or
      // a run dir made.
      ->check([](const std::string& name) { return exec::backend_unavailable_reason(name); });
  cmd->add_option("--pjrt-plugin", opts.pjrt_plugin,
                  "xla: the PJRT plugin .so (default $NETSPEC_PJRT_PLUGIN, else the one "
                  "scripts/install-engines.sh installed)");
  cmd->add_option("--pjrt-devices", opts.devices,
                  "xla on the CPU plugin: in-process devices (default 1)");
  cmd->add_option("--compile-cache", opts.compile_cache,
                  "xla, iree: directory of compiled executables kept between runs, or 'off' "
                  "(default $NETSPEC_COMPILE_CACHE, else $XDG_CACHE_HOME/netspec/xla (iree: "
                  "netspec/iree) or ~/.cache/netspec/xla)");
}

void refuse_xla_across_processes(const char* where, int world) {
  fail(where,
       "--backend xla across processes (WORLD_SIZE {}) is not supported: XLA's CPU PJRT plugin "
       "has no cross-process collectives (its PJRT_Client_Create takes only cpu_device_count, "
       "process_id and asynchronous, and never calls the key-value callbacks), and training "
       "on a GPU plugin's multi-node client is not wired up yet (its client is: `launch -- run "
       "MODULE --backend xla`); use one process with --backend xla --replicas R (R devices), "
       "or --backend cpu across processes (Gloo); see docs/distributed.md",
       world);
}

}  // namespace netspec::cli
