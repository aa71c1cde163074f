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

std::vector<Tensor> TwoLevelComm::from_thread0(std::vector<Tensor> mine) {
  if (id_ != 0) mine.clear();
  return std::move(local_.exchange(id_, std::move(mine)).at(0));
}

std::vector<std::vector<Tensor>> TwoLevelComm::exchange(int, std::vector<Tensor> mine) {
  const size_t k = mine.size();
  std::vector<std::vector<Tensor>> here = local_.exchange(id_, std::move(mine));
  std::vector<Tensor> flat;
  if (id_ == 0) {
    std::vector<Tensor> packed;  // the L contributions end to end
    for (auto& v : here)
      for (auto& t : v) packed.push_back(std::move(t));
    for (auto& v : outer_.exchange(rank_, std::move(packed)))
      for (auto& t : v) flat.push_back(std::move(t));
  }
  flat = from_thread0(std::move(flat));  // P·L·k tensors, replica-major
  std::vector<std::vector<Tensor>> all(static_cast<size_t>(num_replicas()));
  for (size_t r = 0; r < all.size(); ++r)
    for (size_t j = 0; j < k; ++j) all[r].push_back(flat.at(r * k + j));
  return all;
}

std::optional<std::vector<Tensor>> TwoLevelComm::sum_all(int, const std::vector<Tensor>& xs) {
  for (const Tensor& t : xs)  // the same decision on every replica: one module, one signature
    if (t.dtype() != DType::kF32 && t.dtype() != DType::kF64) return std::nullopt;
  std::vector<std::vector<Tensor>> here = local_.exchange(id_, xs);
  std::vector<Tensor> sums;
  if (id_ == 0) {
    for (size_t j = 0; j < xs.size(); ++j) {
      Tensor acc = here[0][j].clone();
      for (size_t r = 1; r < here.size(); ++r) {
        const Tensor& x = here[r][j];
        for (int64_t i = 0; i < acc.numel(); ++i)
          if (acc.dtype() == DType::kF32)
            acc.data<float>()[i] += x.data<float>()[i];
          else
            acc.data<double>()[i] += x.data<double>()[i];
      }
      sums.push_back(std::move(acc));
    }
    auto across = outer_.sum_all(rank_, sums);
    if (!across) fail("all_reduce", "the process group's communicator has no sum all_reduce");
    sums = std::move(*across);
  }
  return from_thread0(std::move(sums));
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
std::vector<std::vector<Tensor>> Executable::run_as_replicas(
    std::string_view entry, const std::vector<std::vector<Tensor>>& inputs, Communicator& outer,
    int rank) {
  const int n = static_cast<int>(inputs.size());
  if (n == 1) return {run_as_replica(entry, inputs[0], outer, rank)};
  return run_on_replicas(n, [&](int r, ReplicaComm& local) {
    TwoLevelComm comm(local, outer, rank, r);
    return run_as_replica(entry, inputs[static_cast<size_t>(r)], comm, rank * n + r);
  });
}

std::vector<Tensor> Executable::run_as_replica(std::string_view /*entry*/,
                                               const std::vector<Tensor>& /*inputs*/,
                                               Communicator& comm, int replica_id) {
  fail("run", "this backend cannot run as replica {} of {} across processes (use cpu or ref)",
       replica_id, comm.num_replicas());
}

}  // namespace netspec::exec
