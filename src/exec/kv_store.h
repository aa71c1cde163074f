// A key-value store shared by the processes of one run. XLA's multi-node PJRT clients (the CUDA
// plugin's node_id / num_nodes) exchange their topology and NCCL ids through one; exec defines
// the interface and dist implements it over the rendezvous TCP store (dist/store_kv.h), so exec
// depends on no transport. Implementations are thread-safe; every wait is bounded.
#pragma once
#include <chrono>
#include <optional>
#include <string>

namespace netspec::exec {

class KvStore {
 public:
  virtual ~KvStore() = default;
  virtual void put(const std::string& key, const std::string& value) = 0;
  // The value once some process has put it; throws netspec::Error naming the key after timeout.
  virtual std::string get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  // The value, or nullopt at once when the key is not set.
  virtual std::optional<std::string> try_get(const std::string& key) = 0;
};

}  // namespace netspec::exec
