// REQUIRE_ENGINE(var, "xla"): makes the backend into `var`, or skips the test with the reason
// (not installed: scripts/install-engines.sh; or built without the PJRT header).
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/error.h"
#include "exec/backend.h"

namespace netspec::test_util {

inline std::unique_ptr<exec::Backend> try_backend(const std::string& name, std::string& why,
                                                  const exec::BackendOptions& o = {}) {
  try {
    return exec::make_backend(name, o);
  } catch (const Error& e) {
    why = e.what();
    return nullptr;
  }
}

}  // namespace netspec::test_util

#define REQUIRE_ENGINE(var, name, ...)                                                      \
  std::string why_##var;                                                                    \
  auto var = ::netspec::test_util::try_backend(name, why_##var __VA_OPT__(, ) __VA_ARGS__); \
  if (!var)                                                                                 \
  GTEST_SKIP() << name << " backend unavailable (scripts/install-engines.sh): " << why_##var
