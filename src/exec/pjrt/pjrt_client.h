// A thin C++ layer over the PJRT C API (xla/pjrt/c/pjrt_c_api.h, taken from the engines install
// at build time). A plugin .so exporting GetPjrtApi is dlopen'ed at run time; every PJRT_Error
// becomes an Error "[xla] <what>: <plugin's message>". Buffers and executables are owned by RAII
// handles. Compile options are a hand-encoded xla.CompileOptionsProto (compile_options_proto).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "exec/kv_store.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace netspec::exec::pjrt {

// The plugin path: `flag` if set, else $NETSPEC_PJRT_PLUGIN, else the engines install location.
// Throws naming every place it looked when none holds a file.
std::string find_plugin(const std::string& flag);

// xla.CompileOptionsProto { executable_build_options = 3 { num_replicas = 4, num_partitions = 5,
// device_assignment = 9 { replica_count = 1, computation_count = 2, computation_devices = 3 {
// replica_device_ids = 1 } } } } with one partition. device_ids: one per replica (empty: no
// assignment, the plugin's default). Throws when replicas < 1 (the plugin would abort).
std::string compile_options_proto(int replicas, const std::vector<int64_t>& device_ids);

struct BufferDeleter {
  const PJRT_Api* api;
  void operator()(PJRT_Buffer* b) const;
};
using Buffer = std::unique_ptr<PJRT_Buffer, BufferDeleter>;

// One process of a multi-node client (GPU plugins): create options node_id and num_nodes, and
// the key-value callbacks over `kv` (pjrt_kv.h), through which the plugin exchanges the nodes'
// topology and NCCL ids. num_nodes 1: a plain single-process client.
struct Distributed {
  int node_id = 0, num_nodes = 1;
  KvStore* kv = nullptr;
};

class Client {
 public:
  // Loads the plugin (once per path per process), initializes it and creates a client;
  // `cpu_devices` > 0 passes the CPU plugin's create option cpu_device_count; `dist` with
  // num_nodes > 1 makes this process node dist.node_id of a multi-node client.
  Client(const std::string& plugin_path, int cpu_devices, const Distributed& dist = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const PJRT_Api* api() const { return api_; }
  const std::string& platform() const { return platform_; }
  // The devices this process drives (addressable), and those of every node (a multi-node
  // client: each node's; otherwise the same as devices()), ordered by id.
  const std::vector<PJRT_Device*>& devices() const { return devices_; }
  const std::vector<PJRT_Device*>& global_devices() const { return global_; }
  int device_id(size_t index) const;
  int device_id(PJRT_Device* d) const;
  // Throws "[xla] what: message" when err is set (and frees it).
  void check(PJRT_Error* err, const char* what) const;

  // What identifies the compiler: plugin path, size and mtime, API version, platform name and
  // version (part of the on-disk compile cache's key).
  const std::string& identity() const { return identity_; }

  PJRT_LoadedExecutable* compile(const std::string& mlir_text, const std::string& options);
  // The plugin's serialization of a compiled executable (PJRT_Executable_Serialize), and the
  // executable loaded back from it; both throw "[xla] ..." when the plugin refuses.
  std::string serialize(PJRT_LoadedExecutable* e) const;
  PJRT_LoadedExecutable* deserialize(const std::string& bytes) const;
  void destroy(PJRT_LoadedExecutable* e) const;
  size_t num_outputs(PJRT_LoadedExecutable* e) const;
  Buffer to_device(const Tensor& t, size_t device);
  Tensor to_host(PJRT_Buffer* b, DType dtype, const Shape& shape) const;
  // Runs e on args.size() devices (args[d]: device d's arguments); returns outputs per device.
  // non_donatable: argument indices the plugin must not consume.
  std::vector<std::vector<Buffer>> execute(PJRT_LoadedExecutable* e,
                                           const std::vector<std::vector<PJRT_Buffer*>>& args,
                                           size_t num_outputs,
                                           const std::vector<int64_t>& non_donatable);

 private:
  void await_and_destroy(PJRT_Event* ev, const char* what) const;
  const PJRT_Api* api_ = nullptr;
  PJRT_Client* client_ = nullptr;
  std::string platform_, identity_;
  std::vector<PJRT_Device*> devices_, global_;
};

}  // namespace netspec::exec::pjrt
