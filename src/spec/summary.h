// Human-readable ParamTable summary (the `netspec summary` table): one row per layer with index,
// kind, output shape (with the batch dim when batch > 0), parameters and FLOPs, then totals and
// the BN layer count.
#pragma once
#include <string>

#include "spec/param_table.h"

namespace netspec {

std::string format_summary(const NetSpec& net, const ParamTable& table, int batch = 1);
// 11689512 -> "11,689,512".
std::string group_digits(int64_t v);

}  // namespace netspec
