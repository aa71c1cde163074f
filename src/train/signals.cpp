// SIGINT / SIGTERM -> stop flag (see signals.h).
#include "train/signals.h"

#include <csignal>
#include <initializer_list>

namespace netspec::train {
namespace {
volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }
}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  // A signal the parent set to be ignored (nohup, `cmd &` in a non-interactive shell) stays so.
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &sa, nullptr);
  }
}

bool stop_requested() { return g_stop != 0; }
void request_stop(bool on) { g_stop = on ? 1 : 0; }

}  // namespace netspec::train
