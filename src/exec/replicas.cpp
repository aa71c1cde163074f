#include "exec/replicas.h"

#include <exception>
#include <thread>

namespace netspec::exec {

// Two-phase barrier: wait for all arrivals, copy the slots, then wait for all departures
// before the slots can be reused by the next round.
std::vector<std::vector<Tensor>> ReplicaComm::exchange(int replica_id, std::vector<Tensor> mine) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return departed_ == 0 || aborted_; });
  if (aborted_) throw ReplicaAborted();
  int64_t my_round = round_;
  slots_[static_cast<size_t>(replica_id)] = std::move(mine);
  if (++arrived_ == n_) {
    ++round_;
    cv_.notify_all();
  } else {
    cv_.wait(lk, [&] { return round_ != my_round || aborted_; });
    if (round_ == my_round) throw ReplicaAborted();
  }
  std::vector<std::vector<Tensor>> all = slots_;
  if (++departed_ == n_) {
    arrived_ = 0;
    departed_ = 0;
    cv_.notify_all();
  }
  return all;
}

void ReplicaComm::abort() {
  std::lock_guard<std::mutex> lk(mu_);
  aborted_ = true;
  cv_.notify_all();
}

std::vector<std::vector<Tensor>> run_on_replicas(
    int n, const std::function<std::vector<Tensor>(int, ReplicaComm&)>& body) {
  if (n < 1) fail("run", "a replicated run needs at least one replica (got {})", n);
  ReplicaComm comm(n);
  std::vector<std::vector<Tensor>> outs(static_cast<size_t>(n));
  std::vector<std::exception_ptr> errs(static_cast<size_t>(n));
  std::vector<bool> aborted(static_cast<size_t>(n), false);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      auto i = static_cast<size_t>(r);
      try {
        outs[i] = body(r, comm);
      } catch (const ReplicaAborted&) {
        errs[i] = std::current_exception();
        aborted[i] = true;
      } catch (...) {
        errs[i] = std::current_exception();
        comm.abort();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < errs.size(); ++i)
    if (errs[i] && !aborted[i]) std::rethrow_exception(errs[i]);
  for (auto& e : errs)
    if (e) std::rethrow_exception(e);
  return outs;
}

}  // namespace netspec::exec
