// error_of(f): the message of the netspec::Error that f throws, or "no error" (for tests that
// check what a refusal says); any other exception is "NOT A netspec::Error: <what>", so a crash
// path that throws std::bad_alloc or std::out_of_range fails the message check instead of the
// test binary.
#pragma once
#include <exception>
#include <functional>
#include <string>

#include "core/error.h"

namespace netspec::test_util {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("NOT A netspec::Error: ") + e.what();
  }
  return "no error";
}

}  // namespace netspec::test_util
