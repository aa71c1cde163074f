// Replica communication for all_reduce: N replicas run on N threads and meet at each
// all_reduce; every replica contributes its tensors and receives the combination over its
// replica group. One ReplicaComm per replicated run. When a replica fails, abort() wakes the
// others (their exchange throws ReplicaAborted) so a replicated run never hangs.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"

namespace netspec::exec {

// Thrown by exchange() in the surviving replicas after another replica failed.
class ReplicaAborted : public Error {
 public:
  ReplicaAborted() : Error("[all_reduce] another replica failed; this replica stopped") {}
};

class ReplicaComm {
 public:
  explicit ReplicaComm(int num_replicas) : n_(num_replicas), slots_(static_cast<size_t>(num_replicas)) {}
  int num_replicas() const { return n_; }
  // Blocks until all N replicas have called exchange for this round, then returns every
  // replica's contribution (indexed by replica id). Rounds are matched by call order.
  // Throws ReplicaAborted once abort() was called.
  std::vector<std::vector<Tensor>> exchange(int replica_id, std::vector<Tensor> mine);
  void abort();

 private:
  int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<Tensor>> slots_;
  int arrived_ = 0;
  int departed_ = 0;
  int64_t round_ = 0;
  bool aborted_ = false;
};

// Runs body(replica_id, comm) for n replicas on n threads and returns each replica's results.
// If any replica throws, the others are aborted and the first real error is rethrown.
std::vector<std::vector<Tensor>> run_on_replicas(
    int n, const std::function<std::vector<Tensor>(int replica_id, ReplicaComm& comm)>& body);

}  // namespace netspec::exec
