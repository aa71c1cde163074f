// Replicas in several processes or machines (docs/distributed.md). The torchrun convention:
// each process is started with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT (and LOCAL_RANK) in
// its environment. join() meets the others through a TCP store served by rank 0 (tcp_store.h),
// checks that every rank runs the same resolved config + net (refusing, by the first differing
// field, otherwise), and connects a Gloo full mesh over TCP whose allreduce/allgather serve the
// modules' all_reduce (GlooComm). Every collective and the rendezvous fail after `timeout` with
// an Error naming the rank and what it waited for: a dead or hung rank stops the others.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "exec/kv_store.h"
#include "exec/replicas.h"

namespace netspec::dist {

struct DistEnv {
  int rank = 0, world = 1, local_rank = 0;
  // LOCAL_WORLD_SIZE (torchrun, `netspec launch`): ranks on this node; fewer than `world` means
  // the group spans several nodes, so its connections must not use loopback. 0: not given.
  int local_world = 0;
  bool multi_node() const { return local_world > 0 && local_world < world; }
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  // Network interface for Gloo's sockets (GLOO_SOCKET_IFNAME), else the interface of the route
  // to MASTER_ADDR (net_iface.h).
  std::string iface;
  std::chrono::milliseconds timeout{60000};  // NETSPEC_DIST_TIMEOUT seconds (default 60)
  // NETSPEC_DIST_TOKEN: the run's secret every rank presents to rank 0's store (`netspec launch`
  // draws one per run); required when WORLD_SIZE > 1.
  std::string token;
};

// The process group from the environment: nullopt when WORLD_SIZE is unset (a plain run).
// Throws naming the variable when one is missing or malformed (NETSPEC_DIST_TOKEN included).
std::optional<DistEnv> dist_env_from_environment();

class ProcessGroup {
 public:
  // `fingerprint`: JSON of everything that must agree across ranks (resolved spec, flags).
  static std::unique_ptr<ProcessGroup> join(const DistEnv& env, const std::string& fingerprint);
  virtual ~ProcessGroup() = default;
  virtual exec::Communicator& comm() = 0;
  virtual const DistEnv& env() const = 0;
  // The rendezvous store as a key-value store under netspec/pjrt/ (XLA's multi-node client
  // exchanges its topology through it: BackendOptions::kv).
  virtual exec::KvStore& kv() = 0;
};

// The first place where two JSON texts differ, as "path: A vs B" ("" when equal). Used to name a
// mismatched rank's config.
std::string json_difference(const std::string& a, const std::string& b);

}  // namespace netspec::dist
