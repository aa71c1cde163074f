// build_param_table: the ParamTable of a net, derived by running every layer kind's body
// (src/layers/<kind>.cpp) in accounting mode on a scratch builder at batch 1. Validates the spec
// on the way: any inconsistency throws `[layer 4 residualBlock] input channels (got 32, expected
// 64)`. Build it once per net and pass it down (emit, trainer, cli take a ParamTable).
#pragma once
#include "spec/param_table.h"

namespace netspec {

ParamTable build_param_table(const NetSpec& net);

}  // namespace netspec
