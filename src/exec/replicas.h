// Replica communication for all_reduce: N replicas run on N threads and meet at each
// all_reduce; every replica contributes its tensors and receives the combination over its
// replica group. One ReplicaComm per replicated run.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "core/tensor.h"

namespace netspec::exec {

class ReplicaComm {
 public:
  explicit ReplicaComm(int num_replicas) : n_(num_replicas), slots_(static_cast<size_t>(num_replicas)) {}
  int num_replicas() const { return n_; }
  // Blocks until all N replicas have called exchange for this round, then returns every
  // replica's contribution (indexed by replica id). Rounds are matched by call order.
  std::vector<std::vector<Tensor>> exchange(int replica_id, std::vector<Tensor> mine);

 private:
  int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<Tensor>> slots_;
  int arrived_ = 0;
  int departed_ = 0;
  int64_t round_ = 0;
};

}  // namespace netspec::exec
