// IREE through its command-line tools (the PyPI runtime wheel ships tools, no C library):
// iree-compile turns StableHLO text into a .vmfb for IREE_BACKEND (llvm-cpu | cuda | rocm,
// default llvm-cpu) and IREE_CHIP; iree-run-module runs one function on .npy inputs;
// iree-benchmark-module times it. Tools are found on $PATH, then in the engines venv
// (scripts/install-engines.sh), then in the oracle venv (BUILD_DIR/venv).
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"

namespace netspec::exec::iree {

// The path of IREE tool `name` (e.g. "iree-compile"; a runtime tool found as a venv's Python entry
// point resolves to the wheel's binary it would start); `override_env` (when non-empty and set)
// names a variable that holds the path authoritatively. Throws listing where it looked.
std::string find_tool(const std::string& name, const std::string& override_env = "");

// iree-compile's arguments (without the program) compiling `in` into `out` for the environment's
// IREE_BACKEND / IREE_CHIP / IREE_EXTRA_FLAGS.
std::vector<std::string> compile_flags(const std::string& in, const std::string& out);

// The runtime device for IREE_BACKEND (IREE_DEVICE overrides): local-task, cuda or hip.
std::string runtime_device();

// Runs argv (argv[0] a path) with stdout+stderr to `log`; returns the exit status (128+signal
// when killed).
int run_tool(const std::vector<std::string>& argv, const std::string& log);

// The last `max` bytes of a file (a tool's complaint for an error message).
std::string file_tail(const std::string& path, size_t max = 2000);

// `program` shell-quoted, for printing a command a user can rerun.
std::string shell_quote(const std::string& s);

}  // namespace netspec::exec::iree
