// IR -> JAX translation (docs/jax.md): every StableHLO op of an hlo::Func becomes one jax.lax /
// jax.numpy call (the per-op table, jax/ops.h), so any lowered layer kind, loss or optimizer has
// a JAX form by construction. A function is cut into groups of consecutive top-level ops (one per
// layer); each group becomes a Python function whose arguments are the values it reads from
// earlier groups.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "hlo/ir.h"

namespace netspec::jax {

// How a function argument reads in Python: `dict[key]` (params, running, masks...) or, with an
// empty dict, the bare name `key` (x, labels, lr).
struct ArgRef {
  std::string dict, key;
};

struct Group {
  std::string name;     // Python function name ("layer3_conv2d")
  std::string comment;  // one docstring line
  size_t begin = 0;     // top-level op range [begin, end) of the function body
  size_t end = 0;
};

struct PyFunc {
  std::vector<std::string> defs;  // the group functions, Python source (def ... )
  std::vector<std::string> body;  // the driver's body lines (calls to the groups), without return
  std::vector<std::string> results;  // Python expressions of the function's results
};

// Translates f (entry-like: its body ends in func.return). args: one ArgRef per argument.
// groups: cover [0, number of ops before the terminator) in order. callee functions of func.call
// are emitted through `callees` (name -> Python source) once each. targets (optional, one per
// result): where the driver assigns a result no later group reads (`stats["..."]`); PyFunc's
// results then name it. Throws naming an op that has no JAX form.
PyFunc translate(const hlo::Func& f, const std::vector<ArgRef>& args,
                 const std::vector<Group>& groups, std::map<std::string, std::string>& callees,
                 const std::vector<std::string>& targets = {});

}  // namespace netspec::jax
