// `netspec launch [--nnodes M --node-rank R] --nproc-per-node N [--master-addr A] [--master-port P]
// -- train NET ...` (torchrun's flags): starts N copies of this netspec on this node with the
// torchrun environment (RANK = R·N + local, LOCAL_RANK, WORLD_SIZE = M·N, LOCAL_WORLD_SIZE,
// NODE_RANK / GROUP_RANK, MASTER_ADDR, MASTER_PORT) and waits for them. With several nodes, run
// the same launch on each with its --node-rank (or SLURM_NODEID / SLURM_NNODES), the same master
// address (rank 0's node, reachable from all) and the same NETSPEC_DIST_TOKEN. When one rank
// exits with an error, the others of this node are stopped (SIGTERM, then SIGKILL after a grace
// period) and launch exits with that status; SIGINT/SIGTERM to launch is passed on to every rank
// (they save and exit 130).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "dist/net_iface.h"
#include "dist/tcp_store.h"
#include "exec/replicas.h"

namespace netspec::cli {
namespace {

volatile sig_atomic_t g_forward = 0;
void on_signal(int sig) { g_forward = sig; }

struct LaunchOpts {
  int nproc = 1, nnodes = 1, node_rank = 0, port = 0;
  std::string addr, iface, token_file;
  std::vector<std::string> cmd;
};

// A variable's integer value, or `fallback` when unset.
int env_or(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end || x < lo || x > hi)
    fail("launch", "environment variable {} must be an integer in {}..{} (got '{}')", name, lo, hi,
         v);
  return static_cast<int>(x);
}

// The run's token. One node: a fresh random one. Several: every node must present the same
// secret, so it comes from the user (--token-file or NETSPEC_DIST_TOKEN), never drawn here.
std::string run_token(const LaunchOpts& o) {
  if (!o.token_file.empty()) {
    std::ifstream f(o.token_file);
    std::string t;
    if (!f || !std::getline(f, t) || t.empty())
      fail("launch", "--token-file {}: cannot read a token from its first line", o.token_file);
    return t;
  }
  if (const char* t = std::getenv("NETSPEC_DIST_TOKEN"); t && *t && o.nnodes > 1) return t;
  if (o.nnodes > 1)
    fail("launch",
         "--nnodes {} needs the run's shared secret: export the same NETSPEC_DIST_TOKEN on every "
         "node (e.g. NETSPEC_DIST_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' ')) or pass "
         "--token-file FILE; a token drawn here would differ on every node",
         o.nnodes);
  return dist::random_token();
}

// Fills what flags left unset from torchrun's / SLURM's variables and checks the node layout.
void resolve_layout(LaunchOpts& o, bool nnodes_given, bool rank_given) {
  // Under `srun` (one launch per node) the step's node count and this node's index; not the
  // job's SLURM_NNODES, which a batch script running on the first node alone also sees.
  const bool srun = std::getenv("SLURM_STEP_NUM_NODES") && std::getenv("SLURM_NODEID");
  if (!nnodes_given && srun) o.nnodes = env_or("SLURM_STEP_NUM_NODES", 1, 1, exec::kMaxReplicas);
  if (!rank_given)
    o.node_rank = srun ? env_or("SLURM_NODEID", 0, 0, 1 << 20) : env_or("NODE_RANK", 0, 0, 1 << 20);
  if (o.nnodes < 1 || o.nproc < 1 || static_cast<int64_t>(o.nnodes) * o.nproc > exec::kMaxReplicas)
    fail("launch", "--nnodes {} x --nproc-per-node {} must be 1..{} ranks", o.nnodes, o.nproc,
         exec::kMaxReplicas);
  if (o.node_rank < 0 || o.node_rank >= o.nnodes)
    fail("launch", "--node-rank {} is not in 0..{} (--nnodes {})", o.node_rank, o.nnodes - 1,
         o.nnodes);
  if (o.addr.empty()) {
    const char* a = std::getenv("MASTER_ADDR");
    if (a && *a)
      o.addr = a;
    else if (o.nnodes > 1)
      fail("launch",
           "--nnodes {} needs --master-addr (or MASTER_ADDR): an address of node 0 "
           "that every node reaches",
           o.nnodes);
    else
      o.addr = "127.0.0.1";
  }
  if (o.port == 0) o.port = env_or("MASTER_PORT", 0, 1, 65535);
  if (o.port == 0) o.port = o.nnodes > 1 ? 29500 : dist::free_loopback_port();
  if (o.nnodes > 1 && dist::resolves_to_loopback(o.addr))
    fail("launch",
         "--master-addr {} is a loopback address: with --nnodes {} the other nodes "
         "cannot reach it; give node 0's address on the network that joins the nodes",
         o.addr, o.nnodes);
  if (o.iface.empty())
    if (const char* i = std::getenv("GLOO_SOCKET_IFNAME")) o.iface = i;
  // Before any rank starts: the interface this node's ranks will use (refuses loopback when
  // the group spans nodes; names a missing --iface).
  const dist::LocalAddress local =
      dist::choose_local_address(o.iface, o.addr, o.port, o.nnodes > 1, "launch");
  if (o.nnodes > 1)
    std::cerr << fmt::format("[launch] node {} of {}: connections on {} {} ({})\n", o.node_rank,
                             o.nnodes, local.iface, local.address, local.how);
}

int launch(const LaunchOpts& o) {
  const int nproc = o.nproc, world = o.nproc * o.nnodes;
  const std::vector<std::string>& cmd = o.cmd;
  if (cmd.empty()) fail("launch", "no command after -- (e.g. -- train mnist-cnn ...)");
  // `run` decides per rank (a GPU plugin's multi-node client; the CPU plugin refuses there).
  for (size_t i = 0; i < cmd.size() && cmd[0] != "run"; ++i)
    if (world > 1 && (cmd[i] == "--backend=xla" ||
                      (cmd[i] == "--backend" && i + 1 < cmd.size() && cmd[i + 1] == "xla")))
      refuse_xla_across_processes("launch", world);
  char exe[4096] = {};
  if (::readlink("/proc/self/exe", exe, sizeof exe - 1) < 0)
    fail("launch", "cannot find this executable ({})", std::strerror(errno));
  // The run's token: only processes started here (or given it) can use rank 0's store.
  const std::string token = run_token(o);
  const pid_t launcher = ::getpid();
  std::vector<pid_t> pids;
  for (int r = 0; r < nproc; ++r) {
    pid_t pid = ::fork();
    if (pid < 0) fail("launch", "fork failed for rank {} ({})", r, std::strerror(errno));
    if (pid == 0) {
      // Its own process group: a terminal's Ctrl-C reaches launch alone, which passes it on
      // once (a second SIGINT would kill a rank before it saved).
      ::setpgid(0, 0);
      // The rank dies with launch (kill -9 of launch must not orphan it): SIGTERM when launch's
      // thread ends, as a forwarded SIGTERM (save, exit 130). If launch died before the prctl,
      // the rank has been reparented already: exit now.
      if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != launcher) ::_exit(1);
      // launch handles SIGINT/SIGTERM and forwards them: the ranks must not inherit an ignored
      // disposition from launch's parent (a rank leaves an inherited SIG_IGN alone).
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      // torchrun's variables (GROUP_* and ROLE_* as torchrun names them, for scripts that read
      // them).
      const std::pair<const char*, std::string> vars[] = {
          {"RANK", std::to_string(o.node_rank * nproc + r)},
          {"LOCAL_RANK", std::to_string(r)},
          {"WORLD_SIZE", std::to_string(world)},
          {"LOCAL_WORLD_SIZE", std::to_string(nproc)},
          {"NODE_RANK", std::to_string(o.node_rank)},
          {"GROUP_RANK", std::to_string(o.node_rank)},
          {"GROUP_WORLD_SIZE", std::to_string(o.nnodes)},
          {"ROLE_RANK", std::to_string(o.node_rank * nproc + r)},
          {"ROLE_WORLD_SIZE", std::to_string(world)},
          {"MASTER_ADDR", o.addr},
          {"MASTER_PORT", std::to_string(o.port)},
          {"NETSPEC_DIST_TOKEN", token}};
      for (const auto& [k, v] : vars) ::setenv(k, v.c_str(), 1);
      if (!o.iface.empty()) ::setenv("GLOO_SOCKET_IFNAME", o.iface.c_str(), 1);
      std::vector<char*> argv{exe};
      for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(exe, argv.data());
      std::fprintf(stderr, "[launch] exec %s failed: %s\n", exe, std::strerror(errno));
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  std::cerr << fmt::format("[launch] {} ranks (node {} of {}, ranks {}..{}) on {}:{} (pids", nproc,
                           o.node_rank, o.nnodes, o.node_rank * nproc,
                           o.node_rank * nproc + nproc - 1, o.addr, o.port);
  for (pid_t p : pids) std::cerr << " " << p;
  std::cerr << ")\n";
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  int status_out = 0, alive = nproc;
  bool stopping = false, forwarded = false;
  auto kill_all = [&](int sig) {
    for (pid_t p : pids)
      if (p > 0) ::kill(p, sig);
  };
  auto stop_deadline = std::chrono::steady_clock::now();
  while (alive > 0) {
    if (g_forward) {
      kill_all(g_forward);
      g_forward = 0;
      forwarded = true;
    }
    int st = 0;
    pid_t p = ::waitpid(-1, &st, WNOHANG);
    if (p > 0) {
      for (size_t r = 0; r < pids.size(); ++r)
        if (pids[r] == p) {
          pids[r] = -1;
          --alive;
          const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
          if (code != 0 && status_out == 0 && !(forwarded && code == 130)) {
            status_out = code;
            std::cerr << fmt::format(
                "[launch] rank {} exited with status {}; stopping the others\n",
                o.node_rank * nproc + static_cast<int>(r), code);
            if (!stopping) {
              stopping = true;
              kill_all(SIGTERM);
              stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            }
          }
        }
      continue;
    }
    if (stopping && std::chrono::steady_clock::now() > stop_deadline) kill_all(SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status_out == 0 && forwarded ? 130 : status_out;
}

void register_launch_command(CLI::App& app) {
  auto o = std::make_shared<LaunchOpts>();
  CLI::App* c = app.add_subcommand(
      "launch", "Start N netspec processes per node as one data-parallel group (torchrun's flags)");
  c->add_option("--nproc,--nproc-per-node", o->nproc, "processes (ranks) to start on this node")
      ->required();
  c->add_option("--nnodes", o->nnodes,
                "nodes in the group (default: under srun $SLURM_STEP_NUM_NODES, else 1)");
  c->add_option("--node-rank", o->node_rank,
                "this node's index 0..nnodes-1 (default: under srun $SLURM_NODEID, else "
                "$NODE_RANK, else 0)");
  c->add_option("--master-addr", o->addr,
                "address of node 0 (rank 0's rendezvous store; default $MASTER_ADDR, else "
                "127.0.0.1 on one node)");
  c->add_option(
      "--master-port", o->port,
      "its port (default $MASTER_PORT, else 29500 for several nodes, a free one for one)");
  c->add_option("--iface", o->iface,
                "network interface for the ranks' connections (GLOO_SOCKET_IFNAME; default the "
                "interface routing to the master address)");
  c->add_option("--token-file", o->token_file,
                "file whose first line is the run's shared secret (several nodes; else "
                "$NETSPEC_DIST_TOKEN)");
  c->add_option("command", o->cmd, "netspec subcommand and its arguments, after --")->required();
  c->footer(
      "\nExample: netspec launch --nproc 2 -- train mnist-cnn --run-dir runs/dp2\n"
      "Two nodes (on node 1: --node-rank 1), the same NETSPEC_DIST_TOKEN exported on both:\n"
      "  netspec launch --nnodes 2 --node-rank 0 --master-addr 10.0.0.1 --nproc-per-node 2 -- "
      "train ...\n"
      "Each rank gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, NODE_RANK, MASTER_ADDR, "
      "MASTER_PORT (docs/distributed.md).");
  c->callback([o, c] {
    LaunchOpts opts = *o;
    resolve_layout(opts, c->count("--nnodes") > 0, c->count("--node-rank") > 0);
    int rc = launch(opts);
    if (rc != 0) std::exit(rc);
  });
}

}  // namespace

NETSPEC_REGISTER_COMMAND(launch, register_launch_command)

}  // namespace netspec::cli
