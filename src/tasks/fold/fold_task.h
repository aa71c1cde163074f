// The fold task's validation (fold_task.cpp), shared with `netspec eval`: AlphaFold 2's metrics
// (fold_metrics.h) of every chain of `test`, means over the chains, per-batch sums folded in
// batch order across the ranks of `split` (each rank scores its batches).
#pragma once
#include "tasks/task.h"

namespace netspec::tasks {

train::EvalMetrics fold_evaluate(const train::Evaluator& ev, const std::vector<Tensor>& params,
                                 const std::vector<Tensor>& running, const data::Dataset& test,
                                 const train::RankSplit& split);

}  // namespace netspec::tasks
