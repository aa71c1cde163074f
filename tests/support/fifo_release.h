// error_within(fifo, f): the message of the netspec::Error f throws (error_of), for readers that
// must refuse a FIFO without opening it. Should f block on it instead, the FIFO is opened for
// writing and closed after `wait` (the reader then reads EOF and returns) and the result starts
// with "HUNG", so a missing check fails the test instead of hanging it.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "tests/error_of.h"

namespace netspec::test_util {

inline std::string error_within(const std::filesystem::path& fifo, const std::function<void()>& f,
                                std::chrono::milliseconds wait = std::chrono::seconds(5)) {
  auto run = std::async(std::launch::async, [&] { return error_of(f); });
  if (run.wait_for(wait) == std::future_status::ready) return run.get();
  while (run.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // succeeds once a reader waits
    if (fd >= 0) ::close(fd);
  }
  return "HUNG on " + fifo.string() + " (then: " + run.get() + ")";
}

}  // namespace netspec::test_util
