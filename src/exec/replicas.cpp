#include "exec/replicas.h"

namespace netspec::exec {

// Two-phase barrier: wait for all arrivals, copy the slots, then wait for all departures
// before the slots can be reused by the next round.
std::vector<std::vector<Tensor>> ReplicaComm::exchange(int replica_id, std::vector<Tensor> mine) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return departed_ == 0; });
  int64_t my_round = round_;
  slots_[static_cast<size_t>(replica_id)] = std::move(mine);
  if (++arrived_ == n_) {
    ++round_;
    cv_.notify_all();
  } else {
    cv_.wait(lk, [&] { return round_ != my_round; });
  }
  std::vector<std::vector<Tensor>> all = slots_;
  if (++departed_ == n_) {
    arrived_ = 0;
    departed_ = 0;
    cv_.notify_all();
  }
  return all;
}

}  // namespace netspec::exec
