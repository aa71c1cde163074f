// Internal contract of the cpu executor's planner and runner (src/exec/cpu only): the Plan one
// function compiles to (value ids, steps, arena buffers), built by plan.cpp, run by
// cpu_backend.cpp, profiled by profile.cpp and checked against the ref kernels by check.cpp.
// while / if / case regions get sub-plans of their own (regions.cpp runs them).
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

// kCapture: a value of an enclosing plan read inside a region (bound through the scope chain).
enum class Src : uint8_t { kArg, kConst, kBuffer, kDynamic, kView, kTuple, kCapture };

struct ValInfo {
  Src src = Src::kDynamic;
  hlo::Type type;
  int arg = -1;
  Tensor constant;
  int buffer = -1;
  int view_of = -1;
  std::vector<int> tuple_elems;
  const hlo::Value* capture = nullptr;  // kCapture
  int last_use = -1;
};

struct Buffer {
  size_t bytes = 0;
  int start = 0, end = 0;
  bool fresh = false;  // allocated per run (holds a function result)
  size_t offset = 0;   // in the arena
};

// kRegion: a while / if / case whose regions run as sub-plans (Step::subs) on the fast kernels.
enum class StepKind : uint8_t { kFast, kView, kRef, kRegion };

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
  std::vector<int> subs;  // kRegion: Plan::subplans index of each region, in region order
  std::string label;      // NETSPEC_PROFILE: "mnemonic [fast|ref|view] operand types -> result"
};

struct Plan {
  const hlo::Func* func = nullptr;    // null for a region's sub-plan
  const hlo::Block* block = nullptr;  // the function body or the region
  // Sub-plans (regions) keep their results in the arena: the caller reads them before the
  // next run. Captures (values of enclosing plans) are bound from the scope chain per run.
  bool sub = false;
  std::vector<std::unique_ptr<Plan>> subplans;
  std::vector<int> captures;
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

// Per-replica run state of a plan: the arena, the value slots, and the sub-plans' states.
struct State {
  std::mutex mu;
  std::shared_ptr<uint8_t[]> arena;
  std::vector<Tensor> vals;
  std::vector<Tensor> arena_views;           // prebuilt tensors over the arena, per value id
  std::vector<std::unique_ptr<State>> subs;  // per Plan::subplans entry, made on first use
};

// Runs P's steps on `inputs` (one per block argument). `outer` resolves captures (null at the
// top level). Results stay in S.vals[P.results[i]] (for a sub-plan: views of its arena).
void run_steps(const Plan& P, State& S, const Tensor* const* inputs, ref::RunContext& ctx,
               const ref::Scope* outer);
// Drops S's references to inputs, captures and fresh results (arena views stay bound).
void drop_refs(const Plan& P, State& S);
// Runs a kRegion step (regions.cpp); `scope` resolves the values of P for its regions.
void run_region_step(const Plan& P, State& S, const Step& st, ref::RunContext& ctx,
                     const ref::Scope& scope);
// The sub-plans of op's regions (a while's cond and body, an if's / case's branches), or false
// when a region cannot run on the cpu plan (then the op runs on its ref kernel).
bool plan_regions(Plan& P, const hlo::Op& op, Step& st);
std::unique_ptr<Plan> build_block_plan(const hlo::Block& b, const Plan* parent);

// NETSPEC_PROFILE step labels: "mnemonic [fast|ref|view] operand types -> result" and
// "fusion[n ops: ...] -> result" (profile.cpp).
std::string step_label(const hlo::Op& op, StepKind kind);
std::string fused_label(const FusedGroup& g, const hlo::Op& last);

// Check mode (NETSPEC_CPU_CHECK=1): a fast step must match its ref kernel on the same operands,
// and every operand must still hold what its producer wrote (catches buffers reused while live).
struct Checker {
  const Plan& P;
  std::vector<Tensor> snap;           // a copy of each value as produced
  std::vector<int> producer;          // step index that produced each value
  const ref::Scope* scope = nullptr;  // kRegion steps run their ref kernel in this scope

  // After the step, operands that share storage with a result (in place) are exempt.
  void operands_intact(const Step& st, size_t index, const std::vector<Tensor>& vals,
                       bool after = false) const;
  std::vector<Tensor> ref_outputs(const Step& st, const std::vector<Tensor>& vals) const;
  void compare(const Step& st, size_t index, const std::vector<Tensor>& want,
               const std::vector<Tensor>& vals) const;
  void record(const Step& st, size_t index, const std::vector<Tensor>& vals);
};

}  // namespace netspec::exec::cpu
