// Internal contract of the cpu executor's planner and runner (src/exec/cpu only): the Plan one
// function compiles to (value ids, steps, arena buffers), built by plan.cpp, run by
// cpu_backend.cpp, profiled by profile.cpp and checked against the ref kernels by check.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/kernels.h"
#include "exec/ref/interpreter.h"
#include "hlo/ir.h"

namespace netspec::exec::cpu {

constexpr size_t kAlign = 64;
inline size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
inline size_t type_bytes(const hlo::Type& t) {
  return static_cast<size_t>(t.numel()) * dtype_size(t.dtype());
}

enum class Src : uint8_t { kArg, kConst, kBuffer, kDynamic, kView, kTuple };

struct ValInfo {
  Src src = Src::kDynamic;
  hlo::Type type;
  int arg = -1;
  Tensor constant;
  int buffer = -1;
  int view_of = -1;
  std::vector<int> tuple_elems;
  int last_use = -1;
};

struct Buffer {
  size_t bytes = 0;
  int start = 0, end = 0;
  bool fresh = false;  // allocated per run (holds a function result)
  size_t offset = 0;   // in the arena
};

enum class StepKind : uint8_t { kFast, kView, kRef };

struct Step {
  const hlo::Op* op = nullptr;
  StepKind kind = StepKind::kRef;
  Compiled compiled;
  ref::Kernel ref_kernel = nullptr;
  std::vector<int> ins, outs;
  int scratch = -1;                   // buffer id
  std::vector<int> release;           // non-arena values whose last use is this step
  const FusedGroup* fused = nullptr;  // a fused elementwise group (op = its last op)
  // A convolution reading its kernel's reverse op operand directly (compile_conv_rhs_reversed):
  // operand 1 is that op's input; check mode reverses it before running the ref kernel.
  const hlo::Op* absorbed_reverse = nullptr;
  std::string label;  // NETSPEC_PROFILE: "mnemonic [fast|ref|view] operand types -> result"
};

struct Plan {
  const hlo::Func* func = nullptr;
  std::vector<ValInfo> vals;
  std::unordered_map<const hlo::Value*, int> ids;
  std::vector<Step> steps;
  std::vector<Buffer> buffers;
  size_t arena_bytes = 0;
  std::vector<int> results;
  bool whole_on_ref = false;
  bool check = false;  // NETSPEC_CPU_CHECK=1: verify each fast step against its ref kernel
  PlanStats stats;
  FusionPlan fusion;  // NETSPEC_NO_FUSION=1 leaves it empty
  // NETSPEC_PROFILE=1: wall time per step summed over runs; merged into the process-wide
  // profile when the plan dies (printed to stderr at exit).
  bool profile = false;
  mutable std::mutex prof_mu;
  mutable std::vector<double> prof_ms;
  mutable int64_t prof_runs = 0;
  ~Plan();
};

// Plans f (NETSPEC_CPU_CHECK, NETSPEC_PROFILE and NETSPEC_NO_FUSION are read here).
std::unique_ptr<Plan> build_plan(const hlo::Func& f);

// NETSPEC_PROFILE step labels: "mnemonic [fast|ref|view] operand types -> result" and
// "fusion[n ops: ...] -> result" (profile.cpp).
std::string step_label(const hlo::Op& op, StepKind kind);
std::string fused_label(const FusedGroup& g, const hlo::Op& last);

// Check mode (NETSPEC_CPU_CHECK=1): a fast step must match its ref kernel on the same operands,
// and every operand must still hold what its producer wrote (catches buffers reused while live).
struct Checker {
  const Plan& P;
  std::vector<Tensor> snap;   // a copy of each value as produced
  std::vector<int> producer;  // step index that produced each value

  // After the step, operands that share storage with a result (in place) are exempt.
  void operands_intact(const Step& st, size_t index, const std::vector<Tensor>& vals,
                       bool after = false) const;
  std::vector<Tensor> ref_outputs(const Step& st, const std::vector<Tensor>& vals) const;
  void compare(const Step& st, size_t index, const std::vector<Tensor>& want,
               const std::vector<Tensor>& vals) const;
  void record(const Step& st, size_t index, const std::vector<Tensor>& vals);
};

}  // namespace netspec::exec::cpu
