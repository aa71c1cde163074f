#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace netspec {

namespace {
thread_local bool t_in_pool = false;  // set on workers and on a caller while it runs a job

// Chunks run on libgomp's threads, the ones oneDNN's primitives use: one set of workers serves
// kernels and primitives, so a worker that just finished a convolution is the one that picks
// up the next fused group (with a short spin, process_env.h) instead of a second pool's sleeping
// thread. NETSPEC_POOL=threads: the pool's own workers (the earlier path, for A/B).
bool use_openmp() {
  static const bool on = [] {
    const char* e = std::getenv("NETSPEC_POOL");
    return !(e && std::string_view(e) == "threads");
  }();
  return on;
}

// NETSPEC_POOL_DYNAMIC=1: chunks claimed by whichever thread comes first (the earlier path, A/B).
bool dynamic_chunks() {
  static const bool on = [] {
    const char* e = std::getenv("NETSPEC_POOL_DYNAMIC");
    return e && std::string_view(e) == "1";
  }();
  return on;
}

// Chunks [c * chunk, min(n, (c + 1) * chunk)), one per OpenMP thread of a team of num_chunks:
// chunk c on thread c (a static schedule), so a thread works on the same part of each tensor
// from op to op (a fused group's first tiles, then the first rows of the dot that reads them)
// and reads what its own core's cache holds. There are never more chunks than threads, so a
// dynamic claim balanced nothing but a late thread's start.
void run_openmp(int64_t n, int64_t chunk, int64_t num_chunks,
                const std::function<void(int64_t, int64_t)>& fn) {
  std::exception_ptr err;
  std::mutex err_mu;
  const int team = static_cast<int>(num_chunks);
  auto one = [&](int64_t c) {
    const bool was = t_in_pool;
    t_in_pool = true;
    try {
      fn(c * chunk, std::min(n, (c + 1) * chunk));
    } catch (...) {
      std::lock_guard<std::mutex> lk(err_mu);
      if (!err) err = std::current_exception();
    }
    t_in_pool = was;
  };
  if (dynamic_chunks()) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
    for (int64_t c = 0; c < num_chunks; ++c) one(c);
  } else {
#pragma omp parallel for schedule(static, 1) num_threads(team)
    for (int64_t c = 0; c < num_chunks; ++c) one(c);
  }
  if (err) std::rethrow_exception(err);
}

int default_threads() {
  if (const char* e = std::getenv("NETSPEC_THREADS")) {
    int v = std::atoi(e);
    if (v > 0) return v;
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int>(hc);
}
}  // namespace

struct ThreadPool::Impl {
  int threads = 1;
  std::vector<std::thread> workers;
  std::mutex dispatch;  // one job at a time; other callers run inline
  std::mutex mu;
  std::condition_variable cv_work, cv_done;
  uint64_t generation = 0;
  bool stop = false;
  // The current job.
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0, chunk = 0, num_chunks = 0;
  // (generation << 32) | next chunk index: a claim only succeeds for the job it was read for.
  std::atomic<uint64_t> claim{0};
  int64_t done = 0;  // guarded by mu
  std::exception_ptr error;

  struct Job {
    uint64_t gen;
    const std::function<void(int64_t, int64_t)>* fn;
    int64_t n, chunk, num_chunks;
  };
  Job snapshot() const { return {generation, fn, n, chunk, num_chunks}; }  // under mu

  // Claims chunks of job j until none are left; returns how many this thread finished.
  int64_t drain(const Job& j) {
    int64_t finished = 0;
    for (;;) {
      uint64_t v = claim.load(std::memory_order_acquire);
      int64_t c;
      do {
        if ((v >> 32) != (j.gen & 0xffffffffu)) return finished;
        c = static_cast<int64_t>(v & 0xffffffffu);
        if (c >= j.num_chunks) return finished;
      } while (!claim.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel));
      int64_t b = c * j.chunk, e = std::min(j.n, b + j.chunk);
      try {
        (*j.fn)(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu);
        if (!error) error = std::current_exception();
      }
      ++finished;
    }
  }

  void worker_loop() {
    t_in_pool = true;
    uint64_t seen = 0;
    for (;;) {
      Job j;
      {
        std::unique_lock<std::mutex> lk(mu);
        cv_work.wait(lk, [&] { return stop || generation != seen; });
        if (stop) return;
        seen = generation;
        j = snapshot();
      }
      int64_t f = drain(j);
      if (f > 0) {
        std::lock_guard<std::mutex> lk(mu);
        done += f;
        if (done == num_chunks) cv_done.notify_one();
      }
    }
  }
};

ThreadPool::ThreadPool(int threads) : impl_(std::make_unique<Impl>()) {
  impl_->threads = threads > 0 ? threads : default_threads();
  if (use_openmp()) return;  // libgomp's threads do the work
  for (int i = 1; i < impl_->threads; ++i)
    impl_->workers.emplace_back([this] { impl_->worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv_work.notify_all();
  for (auto& t : impl_->workers) t.join();
}

int ThreadPool::num_threads() const { return impl_->threads; }

void ThreadPool::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t max_chunks = std::min<int64_t>(impl_->threads, (n + grain - 1) / grain);
  if (max_chunks <= 1 || t_in_pool) {
    fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> dispatch(impl_->dispatch, std::try_to_lock);
  if (!dispatch.owns_lock()) {  // another thread (e.g. a replica) owns the pool
    fn(0, n);
    return;
  }
  const int64_t chunk = (n + max_chunks - 1) / max_chunks, num_chunks = (n + chunk - 1) / chunk;
  if (use_openmp()) {
    run_openmp(n, chunk, num_chunks, fn);
    return;
  }
  Impl& p = *impl_;
  Impl::Job j;
  {
    std::lock_guard<std::mutex> lk(p.mu);
    p.fn = &fn;
    p.n = n;
    p.chunk = chunk;
    p.num_chunks = num_chunks;
    p.done = 0;
    p.error = nullptr;
    ++p.generation;
    p.claim.store((p.generation & 0xffffffffu) << 32, std::memory_order_release);
    j = p.snapshot();
  }
  p.cv_work.notify_all();
  t_in_pool = true;
  int64_t f = p.drain(j);
  t_in_pool = false;
  std::exception_ptr err;
  {
    std::unique_lock<std::mutex> lk(p.mu);
    p.done += f;
    p.cv_done.wait(lk, [&] { return p.done == p.num_chunks; });
    p.fn = nullptr;
    err = p.error;
  }
  if (err) std::rethrow_exception(err);
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool;
  return pool;
}

}  // namespace netspec
