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
#include <unordered_set>
#include <vector>

#include "core/tensor.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/backend.h"
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
  // Layout: 0 = row-major; B > 0 = a rank-4 [N, C, H, W] tensor stored channel-blocked
  // (oneDNN nChw{B}c: [N, C/B, H, W, B], C % B == 0, so the byte size is unchanged).
  int block = 0;
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
  // A dot_general writing the layout of its only reader, this transpose (compile_dot_transposed_
  // out): outs[0] is the transpose's result; check mode transposes the ref kernel's result.
  const hlo::Op* absorbed_transpose = nullptr;
  std::vector<int> subs;  // kRegion: Plan::subplans index of each region, in region order
  // A layout reorder inserted by the planner (op = the op it serves, for labels): +B plain ->
  // blocked, -B blocked -> plain (layout.cpp).
  int reorder = 0;
  // A convolution with its eval BN (+ ReLU) group as post-ops (conv_fold.cpp): fused = that
  // group, fused_conv = the conv; ins = x, w, then fold_ins (s, t and the group's other inputs).
  const hlo::Op* fused_conv = nullptr;
  std::vector<const hlo::Value*> fold_ins;
  // Reduces folded into the fused group's step, each reading one group output (in group order):
  // blocked groups' sums (the output's only reader) and plain groups' row folds; outs = the
  // outputs written, then these reduces' results (plan.cpp).
  std::vector<const hlo::Op*> fused_reduces;
  // Group outputs among the fused reduces' operands that are written too (row folds of a value
  // with other readers); they stay in the other outputs' place in group order.
  std::vector<const hlo::Value*> reduced_and_written;
  std::string label;  // NETSPEC_PROFILE: "mnemonic [fast|ref|view] operand types -> result"
  // Not run: its result is a while's initial state that the loop overwrites whole before any
  // read (hlo::state_written_whole_unread), in that state's slot (plan.cpp).
  bool skip = false;
};

struct Plan {
  // The rematerialized copy of the module a top-level plan runs (hlo::rematerialize; null with
  // NETSPEC_NO_REMAT=1 or when nothing was recomputed): `func` and the steps point into it.
  std::unique_ptr<hlo::Module> remat_module;
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
  // Arguments the run may overwrite (top-level plans of Executable::run_donating; one flag per
  // argument) and those a result is actually written into (their storage must be unshared).
  std::vector<bool> donated;
  std::vector<int> donated_args;
  bool whole_on_ref = false;
  bool check = false;  // NETSPEC_CPU_CHECK=1: verify each fast step against its ref kernel
  PlanStats stats;
  FusionPlan fusion;  // NETSPEC_NO_FUSION=1 leaves it empty
  // Channel-blocked layout propagation (layout.cpp): the block size chosen for this CPU (0 =
  // off) and, per IR value, its copy in the other layout once a reorder step made one.
  int chan_block = 0;
  std::unordered_map<const hlo::Value*, int> plain_copy, blocked_copy;
  std::unordered_map<const hlo::Value*, int> use_count;  // readers per value (conv_fold.cpp)
  std::unordered_set<const hlo::Op*> absorbed_reduces;   // run inside a fused group's step
  // The kept number (RunArgs::in_gen) of this plan's module constants: fixed for its life.
  const uint64_t const_gen = next_kept_generation();
  // NETSPEC_PROFILE=1: wall time per step summed over runs; merged into the process-wide
  // profile when the plan dies (printed to stderr at exit). The first run (page faults on fresh
  // arenas, oneDNN primitive creation) is kept apart and counted only if it was the only one.
  bool profile = false;
  mutable std::mutex prof_mu;
  mutable std::vector<double> prof_ms, prof_first_ms;
  mutable int64_t prof_runs = 0;
  ~Plan();
};

// Plans f (NETSPEC_CPU_CHECK, NETSPEC_PROFILE and NETSPEC_NO_FUSION are read here); results may
// be written into the storage of the `donated` arguments (one flag per argument).
std::unique_ptr<Plan> build_plan(const hlo::Func& f, const std::vector<bool>& donated = {});

// Per-replica run state of a plan: the arena, the value slots, and the sub-plans' states.
struct State {
  std::mutex mu;
  std::shared_ptr<uint8_t[]> arena;
  std::vector<Tensor> vals;
  std::vector<Tensor> arena_views;           // prebuilt tensors over the arena, per value id
  std::vector<std::unique_ptr<State>> subs;  // per Plan::subplans entry, made on first use
  std::vector<KeptCopy> kept;                // per step: forms derived from kept operands
};

// Runs P's steps on `inputs` (one per block argument). `outer` resolves captures (null at the
// top level). Results stay in S.vals[P.results[i]] (for a sub-plan: views of its arena).
// arg_gens (top level, may be null): per argument, Executable::run_kept's `kept` number.
void run_steps(const Plan& P, State& S, const Tensor* const* inputs, ref::RunContext& ctx,
               const ref::Scope* outer, const uint64_t* arg_gens = nullptr);
// Drops S's references to inputs, captures and fresh results (arena views stay bound).
void drop_refs(const Plan& P, State& S);
// Runs a kRegion step (regions.cpp); `scope` resolves the values of P for its regions.
void run_region_step(const Plan& P, State& S, const Step& st, ref::RunContext& ctx,
                     const ref::Scope& scope);
// The sub-plans of op's regions (a while's cond and body, an if's / case's branches), or false
// when a region cannot run on the cpu plan (then the op runs on its ref kernel).
bool plan_regions(Plan& P, const hlo::Op& op, Step& st);
std::unique_ptr<Plan> build_block_plan(const hlo::Block& b, const Plan* parent,
                                       const std::vector<bool>& donated = {});

// NETSPEC_PROFILE step labels: "mnemonic [fast|ref|view] operand types -> result" and
// "fusion[n ops: ...] -> result" (profile.cpp).
std::string step_label(const hlo::Op& op, StepKind kind);
std::string fused_label(const FusedGroup& g, const hlo::Op& last);

// Plan values: add_val an unnamed one (a reorder's copy), new_val one for IR value v (P.ids),
// use_of the id of v (in a sub-plan, a tensor of an enclosing scope becomes a capture).
int add_val(Plan& P, const hlo::Type& t);
int new_val(Plan& P, const hlo::Value* v);
int use_of(Plan& P, const hlo::Value* v);

// Layout propagation (layout.cpp; the block size is kernels.h's layout_block_size()).
// The id of v in row-major / blocked layout, adding a reorder step (served op `op`) on first need.
int want_plain(Plan& P, const hlo::Value* v, const hlo::Op& op);
int want_blocked(Plan& P, const hlo::Value* v, const hlo::Op& op);
// Is a plan value / a shape eligible for the blocked layout of P?
bool blockable(const Plan& P, const hlo::Type& t);
// Values of P read inside op's regions get row-major copies (P.ids points at them after).
void plain_for_regions(Plan& P, const hlo::Op& op);
// Adds op's step on a layout-aware kernel (conv, reduce, pooling, elementwise) when one of its
// operands is blocked or it produces a blocked result; false: the caller plans it row-major.
bool add_blocked_step(Plan& P, const hlo::Op& op, Step& st, const Compiler* table);
// Folds group g (an eval BN affine y * s + t, optionally then max(., 0)) into the step of the
// convolution producing y, when y has no other reader: the conv runs them as oneDNN post-ops
// and the group gets no step (conv_fold.cpp). False: g is planned as usual.
bool fold_conv_affine(Plan& P, const hlo::Op& last, const FusedGroup& g);
// A row-major copy of a value stored with block size b (check mode).
Tensor unblocked(const Tensor& t, int b);

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
  Tensor plain(int id, const std::vector<Tensor>& vals) const;
};

}  // namespace netspec::exec::cpu
