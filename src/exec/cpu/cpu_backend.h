// The cpu executor's planner, exposed for tests and benchmarks. A Plan is built once per
// function: values get ids, ops become steps dispatched through a table indexed by OpKind (fast
// kernel, view, or the ref kernel as fallback), and every fast result gets a buffer in one arena
// whose offsets are reused once a buffer's last use has passed (elementwise ops run in place on
// an operand that dies there). Function results live in fresh per-run storage, or in a donated
// argument's (Executable::run_donating: a session's fed-back state is updated in place).
// Debugging: NETSPEC_CPU_CHECK=1 (read when a plan is built) runs each fast step's ref kernel
// beside it and fails naming the first step whose result disagrees or whose operand was
// overwritten while live; NETSPEC_CPU_CHECK_DUMP=1 also prints the function to stderr.
// NETSPEC_PROFILE=1 prints wall time per op kind and per step at exit; NETSPEC_NO_FUSION=1 turns
// off elementwise fusion (fusion.cpp: f32 elementwise chains run as one tiled kernel);
// NETSPEC_SCALAR_MATH=1 keeps f32 exp/log/tanh/logistic on scalar loops (vmath.h).
// NETSPEC_NO_REMAT=1 keeps forward values alive for the backward pass instead of recomputing
// cheap elementwise ones from what is alive anyway (hlo::rematerialize, applied to a copy).
// NETSPEC_NO_DOT_FOLD=1 keeps transposes around dots as their own steps (hlo/dot_fold.cpp and
// the planner fold them into strided matmul operands and results).
// NETSPEC_CPU_LAYOUT=plain|8|16 overrides the channel-blocked layout the planner propagates
// between convolutions (layout.cpp; default by the CPU found: 16 with AVX-512, 8 with AVX2).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "hlo/ir.h"

namespace netspec::exec::cpu {

// The counters a region's sub-plan adds into its plan's (PlanStats::add), X(type, name).
// clang-format off
#define NETSPEC_SUMMED_PLAN_STATS(X) \
  X(size_t, arena_bytes) /* the arena one run needs */                                     \
  X(size_t, value_bytes) /* sum of all planned result sizes (what no reuse would need) */  \
  X(int, steps)          /* ops that run (constants/iota are folded at plan time) */       \
  X(int, fast_steps)     /* steps on a cpu kernel */                                       \
  X(int, ref_steps)      /* steps on a ref kernel (fallback) */                            \
  X(int, inplace)        /* results that share an operand's buffer */                      \
  X(int, views)          /* reshapes without a copy */                                     \
  X(int, blocked_values) /* results stored channel-blocked (nChw16c / nChw8c) */           \
  X(int, reorders)       /* layout reorder steps the planner inserted */                   \
  X(int, conv_postops)   /* eval BN (+ ReLU) groups folded into their conv's post-ops */   \
  X(int, fused_sums)     /* channel sums computed inside their operand's fused group */    \
  X(int, fused_row_reduces) /* row reductions (LayerNorm, softmax) inside their operand's group */ \
  X(int, winograd_convs) /* convolutions on a Winograd kernel (oneDNN's or own) */         \
  X(int, padded_dots)    /* dot_generals copying an operand to padded rows (dot.cpp) */   \
  X(int, split_dots)     /* dot_generals split between threads by netspec (dot.cpp) */   \
  X(int, fused_chains)   /* pairs of binary ops run as one pass in fused groups */         \
  X(int, fused_bcasts)   /* broadcasts in fused groups read in place by their binary op */   \
  X(int, fused_generated) /* fused-group instructions run as generated code (fusion_jit) */ \
  X(int, unfilled_states) /* while states the loop overwrites whole: their fill is skipped */
// clang-format on

struct PlanStats {
#define NETSPEC_PLAN_STAT(type, name) type name = 0;
  NETSPEC_SUMMED_PLAN_STATS(NETSPEC_PLAN_STAT)
#undef NETSPEC_PLAN_STAT
  int calls_inlined = 0;              // func.calls replaced by their callee's ops
  int remat_clones = 0;               // ops recomputed near a late use (hlo/remat.cpp)
  int dot_transposes_folded = 0;      // dot operands read through a transpose's strides
  int bf16_convolutions_widened = 0;  // bf16 convolutions run in f32 (hlo/bf16_widen.cpp)
  int slices_sunk = 0;                // slices computed by their producer's op (hlo/slice_sink.cpp)
  int donated = 0;                    // results written in place into a donated argument
  bool whole_function_on_ref = false;  // the planner gave the whole function to ref
  std::string fallback_ops;            // mnemonics that use the ref kernel, comma separated
  // Adds a sub-plan's summed counters (its fallback ops are merged by the planner).
  void add(const PlanStats& s) {
#define NETSPEC_ADD_PLAN_STAT(type, name) name += s.name;
    NETSPEC_SUMMED_PLAN_STATS(NETSPEC_ADD_PLAN_STAT)
#undef NETSPEC_ADD_PLAN_STAT
  }
};

// `donated`: one flag per argument the run may overwrite (Executable::run_donating).
PlanStats plan_stats(const hlo::Func& f, const std::vector<bool>& donated = {});

// Does this executor run bf16 products as f32 ones on the bf16-rounded operands (no AVX-512 BF16
// or AMX kernels here, or NETSPEC_BF16_EMULATE=1)? The same rounding, at about f32's speed.
bool bf16_products_in_f32();

}  // namespace netspec::exec::cpu
