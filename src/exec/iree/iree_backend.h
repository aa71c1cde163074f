// The `iree` backend: load() prints the module and compiles it once with iree-compile (a .vmfb
// in a private temp folder); run() writes the inputs as .npy, calls iree-run-module and reads the
// results back. Each call is a process, so a step's state cannot stay on the device between
// calls (docs/engines.md); benchmark_ms() times calls inside iree-benchmark-module instead.
#pragma once
#include <memory>
#include <string_view>
#include <vector>

#include "core/tensor.h"
#include "hlo/ir.h"

namespace netspec::exec::iree {

// Median ms per call of `entry` on `inputs`, measured by iree-benchmark-module (`reps` timed
// repetitions after its own warm-up); compiles the module first.
double benchmark_ms(std::shared_ptr<const hlo::Module> module, std::string_view entry,
                    const std::vector<Tensor>& inputs, int reps);

}  // namespace netspec::exec::iree
