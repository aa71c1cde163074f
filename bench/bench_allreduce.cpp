// all_reduce bandwidth across processes through Gloo on loopback (what `netspec launch` uses):
// forks N-1 ranks, meets them through the rendezvous store on 127.0.0.1 and times the
// communicator's f32 sum (dist::GlooComm::sum_all, the path a module's all_reduce takes,
// packing included) for sizes 4 KiB .. 64 MiB. Bus bandwidth = 2(N-1)/N · bytes / time (ring).
//   bench_allreduce [N=2]
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "bench/bench_util.h"
#include "dist/process_group.h"
#include "dist/tcp_store.h"

int main(int argc, char** argv) {
  using namespace netspec;
  const int n = argc > 1 ? std::atoi(argv[1]) : 2;
  const int port = dist::free_loopback_port();
  int rank = 0;
  std::vector<pid_t> kids;
  for (int r = 1; r < n; ++r) {
    pid_t p = fork();
    if (p == 0) {
      rank = r;
      kids.clear();
      break;
    }
    kids.push_back(p);
  }
  dist::DistEnv env;
  env.rank = rank;
  env.world = n;
  env.master_port = port;
  auto g = dist::ProcessGroup::join(env, "{}");
  exec::Communicator& c = g->comm();
  if (rank == 0)
    std::printf("ranks %d on 127.0.0.1 (Gloo TCP)\n%12s %12s %12s\n", n, "bytes", "ms", "bus GB/s");
  for (int64_t bytes = 4 << 10; bytes <= (64 << 20); bytes *= 4) {
    std::vector<Tensor> xs{Tensor(DType::kF32, {bytes / 4})};
    const int reps = bytes >= (16 << 20) ? 5 : 15;
    double s = bench::time_median([&] { c.sum_all(rank, xs); }, 2, reps);
    if (rank == 0)
      std::printf("%12lld %12.3f %12.3f\n", static_cast<long long>(bytes), 1e3 * s,
                  2.0 * (n - 1) / n * static_cast<double>(bytes) / s / 1e9);
  }
  g.reset();
  for (pid_t p : kids) waitpid(p, nullptr, 0);
  return 0;
}
