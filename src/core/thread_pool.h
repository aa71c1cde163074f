// A small persistent thread pool for data-parallel loops: parallel_for(n, grain, fn) splits
// [0, n) into at most num_threads() contiguous chunks of >= grain items and runs fn(begin, end)
// on the workers and the calling thread. Nested calls, and calls made while another thread is
// using the pool, run inline on the caller (no deadlock, no oversubscription).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

namespace netspec {

class ThreadPool {
 public:
  // threads <= 0: one per hardware core (NETSPEC_THREADS in the environment overrides).
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const;
  // Runs fn(begin, end) over a partition of [0, n); returns when every chunk is done.
  // Exceptions thrown by fn are rethrown on the caller (the first one wins).
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // The process-wide pool used by the executors.
  static ThreadPool& global();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Shorthand for ThreadPool::global().parallel_for.
inline void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  ThreadPool::global().parallel_for(n, grain, fn);
}

}  // namespace netspec
