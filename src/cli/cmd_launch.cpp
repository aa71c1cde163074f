// `netspec launch --nproc N [--master-addr A] [--master-port P] -- train NET ...`: starts N
// copies of this netspec with the torchrun environment (RANK, LOCAL_RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT) on one machine and waits for them. When one exits with an error, the
// others are stopped (SIGTERM, then SIGKILL after a grace period) and launch exits with that
// status; SIGINT/SIGTERM to launch is passed on to every rank (they save and exit 130).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "dist/tcp_store.h"
#include "exec/replicas.h"

namespace netspec::cli {
namespace {

volatile sig_atomic_t g_forward = 0;
void on_signal(int sig) { g_forward = sig; }

int launch(int nproc, const std::string& addr, int port, const std::vector<std::string>& cmd) {
  if (nproc < 1 || nproc > exec::kMaxReplicas)
    fail("launch", "--nproc must be in 1..{} (got {})", exec::kMaxReplicas, nproc);
  if (cmd.empty()) fail("launch", "no command after -- (e.g. -- train mnist-cnn ...)");
  for (size_t i = 0; i < cmd.size(); ++i)
    if (nproc > 1 && (cmd[i] == "--backend=xla" ||
                      (cmd[i] == "--backend" && i + 1 < cmd.size() && cmd[i + 1] == "xla")))
      refuse_xla_across_processes("launch", nproc);
  if (port == 0) port = dist::free_loopback_port();
  char exe[4096] = {};
  if (::readlink("/proc/self/exe", exe, sizeof exe - 1) < 0)
    fail("launch", "cannot find this executable ({})", std::strerror(errno));
  // The run's token: only processes started here (or given it) can use rank 0's store.
  const std::string token = dist::random_token();
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
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      ::setenv("MASTER_ADDR", addr.c_str(), 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("NETSPEC_DIST_TOKEN", token.c_str(), 1);
      std::vector<char*> argv{exe};
      for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(exe, argv.data());
      std::fprintf(stderr, "[launch] exec %s failed: %s\n", exe, std::strerror(errno));
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  std::cerr << fmt::format("[launch] {} ranks on {}:{} (pids", nproc, addr, port);
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
                "[launch] rank {} exited with status {}; stopping the others\n", r, code);
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
  struct Opts {
    int nproc = 1, port = 0;
    std::string addr = "127.0.0.1";
    std::vector<std::string> cmd;
  };
  auto o = std::make_shared<Opts>();
  CLI::App* c = app.add_subcommand(
      "launch", "Start N netspec processes as one data-parallel group on this machine");
  c->add_option("--nproc", o->nproc, "processes (ranks) to start")->required();
  c->add_option("--master-addr", o->addr, "address of rank 0's rendezvous store")
      ->capture_default_str();
  c->add_option("--master-port", o->port, "its port (default: a free one)");
  c->add_option("command", o->cmd, "netspec subcommand and its arguments, after --")->required();
  c->footer(
      "\nExample: netspec launch --nproc 2 -- train mnist-cnn --run-dir runs/dp2\n"
      "Each rank gets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; several machines: "
      "start `netspec train` on each with those set (docs/distributed.md).");
  c->callback([o] {
    int rc = launch(o->nproc, o->addr, o->port, o->cmd);
    if (rc != 0) std::exit(rc);
  });
}

}  // namespace

NETSPEC_REGISTER_COMMAND(launch, register_launch_command)

}  // namespace netspec::cli
