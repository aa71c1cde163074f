// Replica communication for all_reduce. A Communicator is where the replicas of a replicated run
// meet: ReplicaComm for N replicas on N threads of one process, dist::GlooComm for replicas in
// different processes or machines (src/dist). Every replica contributes its tensors and receives
// the combination over its replica group. When a replica fails, abort() wakes the others (their
// exchange throws ReplicaAborted) so a replicated run never hangs.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"

namespace netspec::exec {

// Most replicas one run may have (threads are created per replica; `run --replicas` and the
// trainer refuse more instead of exhausting the machine).
constexpr int kMaxReplicas = 1024;

// Thrown by exchange() in the surviving replicas after another replica failed.
class ReplicaAborted : public Error {
 public:
  ReplicaAborted() : Error("[all_reduce] another replica failed; this replica stopped") {}
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int num_replicas() const = 0;
  // Blocks until every replica has called exchange for this round, then returns every replica's
  // contribution (indexed by replica id). Rounds are matched by call order.
  virtual std::vector<std::vector<Tensor>> exchange(int replica_id, std::vector<Tensor> mine) = 0;
  // Native sum over all replicas of each tensor (every replica gets identical bits); nullopt when
  // not offered (the caller folds exchange()'s contributions itself).
  virtual std::optional<std::vector<Tensor>> sum_all(int /*replica_id*/,
                                                     const std::vector<Tensor>& /*xs*/) {
    return std::nullopt;
  }
};

class ReplicaComm final : public Communicator {
 public:
  explicit ReplicaComm(int num_replicas)
      : n_(num_replicas), slots_(static_cast<size_t>(num_replicas)) {}
  int num_replicas() const override { return n_; }
  // Throws ReplicaAborted once abort() was called.
  std::vector<std::vector<Tensor>> exchange(int replica_id, std::vector<Tensor> mine) override;
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

// One of L replica threads of this process (`local`, this thread `local_id`) in a group of P
// processes meeting in `outer` (one member per process, this one `rank`): global replica id
// rank·L + local_id of P·L. sum_all: the L contributions summed in thread order, then across the
// processes (outer.sum_all); exchange: the L contributions gathered, then exchanged across the
// processes. Thread 0 talks to `outer`; the others get its result through `local`.
class TwoLevelComm final : public Communicator {
 public:
  TwoLevelComm(ReplicaComm& local, Communicator& outer, int rank, int local_id)
      : local_(local), outer_(outer), rank_(rank), id_(local_id) {}
  int num_replicas() const override { return outer_.num_replicas() * local_.num_replicas(); }
  std::vector<std::vector<Tensor>> exchange(int replica_id, std::vector<Tensor> mine) override;
  std::optional<std::vector<Tensor>> sum_all(int replica_id,
                                             const std::vector<Tensor>& xs) override;

 private:
  // Thread 0's tensors on every local thread.
  std::vector<Tensor> from_thread0(std::vector<Tensor> mine);
  ReplicaComm& local_;
  Communicator& outer_;
  int rank_, id_;
};

// Runs body(replica_id, comm) for n replicas (1..kMaxReplicas) on n threads and returns each
// replica's results. If any replica throws, the others are aborted and the first real error is
// rethrown; if a thread cannot be created, the started ones are aborted and joined and an Error
// says so.
std::vector<std::vector<Tensor>> run_on_replicas(
    int n, const std::function<std::vector<Tensor>(int replica_id, ReplicaComm& comm)>& body);

}  // namespace netspec::exec
