// error_of(f): the message of the netspec::Error that f throws, or "no error" (for tests that
// check what a refusal says).
#pragma once
#include <functional>
#include <string>

#include "core/error.h"

namespace netspec::test_util {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace netspec::test_util
