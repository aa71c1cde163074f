#include "exec/backend.h"

#include <fmt/format.h>

namespace netspec::exec {

std::unique_ptr<Backend> make_backend(std::string_view name) {
  if (name == "ref") return make_ref_backend();
  if (name == "cpu") return make_cpu_backend();
  fail("backend", "unknown backend '{}' (known: ref, cpu)", name);
}

void check_inputs(const hlo::Func& f, const std::vector<Tensor>& inputs) {
  if (inputs.size() != f.num_args())
    fail("run", "function @{} takes {} argument(s), got {}", f.name, f.num_args(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const hlo::Type& t = f.arg(i)->type;
    if (!t.is_tensor()) fail("run", "argument {} (%arg{}) has non-tensor type {}", i, i, t.str());
    if (inputs[i].dtype() != t.dtype() || inputs[i].shape() != t.shape())
      fail("run", "argument {} (%arg{}) expects {}, got {}", i, i, t.str(), inputs[i].type_str());
  }
}

}  // namespace netspec::exec
