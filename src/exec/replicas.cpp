#include "exec/replicas.h"

#include <exception>
#include <system_error>
#include <thread>

#include "exec/backend.h"

namespace netspec::exec {

// Two-phase barrier: wait for all arrivals, copy the slots, then wait for all departures
// before the slots can be reused by the next round.
std::vector<std::vector<Tensor>> ReplicaComm::exchange(int replica_id, std::vector<Tensor> mine) {
  // Private copies: a contribution may live in its replica's arena, which that replica reuses
  // as soon as it has left this exchange, while the others still read it.
  for (Tensor& t : mine) t = t.clone();
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
  if (n > kMaxReplicas)
    fail("run", "too many replicas (got {}, expected at most {}: one thread each)", n,
         kMaxReplicas);
  ReplicaComm comm(n);
  std::vector<std::vector<Tensor>> outs(static_cast<size_t>(n));
  std::vector<std::exception_ptr> errs(static_cast<size_t>(n));
  std::vector<char> aborted(static_cast<size_t>(n), 0);  // not vector<bool>: written by threads
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  auto body_of = [&](int r) {
    return [&, r] {
      auto i = static_cast<size_t>(r);
      try {
        outs[i] = body(r, comm);
      } catch (const ReplicaAborted&) {
        errs[i] = std::current_exception();
        aborted[i] = 1;
      } catch (...) {
        errs[i] = std::current_exception();
        comm.abort();
      }
    };
  };
  for (int r = 0; r < n; ++r) {
    try {
      threads.emplace_back(body_of(r));
    } catch (const std::system_error& e) {
      // Out of threads or memory: the started replicas wait for the missing ones; wake them.
      comm.abort();
      for (auto& t : threads) t.join();
      fail("run", "could not start replica {} of {} ({}); use fewer replicas", r, n, e.what());
    }
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < errs.size(); ++i)
    if (errs[i] && !aborted[i]) std::rethrow_exception(errs[i]);
  for (auto& e : errs)
    if (e) std::rethrow_exception(e);
  return outs;
}

// Defined here rather than in backend.cpp: the multi-process path belongs to replica runs.
std::vector<Tensor> Executable::run_as_replica(std::string_view /*entry*/,
                                               const std::vector<Tensor>& /*inputs*/,
                                               Communicator& comm, int replica_id) {
  fail("run", "this backend cannot run as replica {} of {} across processes (use cpu or ref)",
       replica_id, comm.num_replicas());
}

}  // namespace netspec::exec
