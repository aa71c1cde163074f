// Graceful stop for the training loop: SIGINT / SIGTERM set a flag that the loop reads after each
// step (it then saves `last` and returns). The handler is one-shot (SA_RESETHAND): a second
// Ctrl-C kills the process the usual way.
#pragma once

namespace netspec::train {

void install_stop_handlers();
bool stop_requested();
void request_stop(bool on = true);  // what the handler does; tests call it directly

}  // namespace netspec::train
