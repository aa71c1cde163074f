// The cpu executor: plans each function once (see cpu_backend.h), then runs the plan with one
// arena per replica state. Steady-state runs allocate only the function results (and whatever
// ref fallback kernels allocate).
#include "exec/cpu/cpu_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <malloc.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "exec/backend.h"
#include "exec/cpu/kernels.h"
#include "exec/ref/interpreter.h"
#include "hlo/printer.h"

namespace netspec::exec::cpu {
namespace {

using hlo::OpKind;

const Compiler* compiler_table() {
  static const std::array<Compiler, hlo::kNumOpKinds> table = [] {
    std::array<Compiler, hlo::kNumOpKinds> t{};
    register_elementwise(t.data());
    register_shape(t.data());
    register_reduce(t.data());
    register_dot(t.data());
    register_conv(t.data());
    register_window(t.data());
    return t;
  }();
  return table.data();
}

constexpr size_t kAlign = 64;
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

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

// Process-wide profile: per op kind and per distinct step label, printed at exit.
struct Profile {
  std::mutex mu;
  std::map<std::string, std::pair<double, int64_t>> by_kind, by_step;  // ms, calls
  std::map<std::string, std::pair<double, int64_t>> by_func;           // ms, runs
  ~Profile() {
    if (by_kind.empty()) return;
    auto top = [](const std::map<std::string, std::pair<double, int64_t>>& m, size_t n) {
      std::vector<std::pair<std::string, std::pair<double, int64_t>>> v(m.begin(), m.end());
      std::sort(v.begin(), v.end(),
                [](auto& a, auto& b) { return a.second.first > b.second.first; });
      if (v.size() > n) v.resize(n);
      return v;
    };
    double total = 0;
    for (auto& [k, v] : by_kind) total += v.first;
    std::fprintf(stderr, "NETSPEC_PROFILE (cpu executor, wall ms summed over runs)\n");
    for (auto& [k, v] : by_func)
      std::fprintf(stderr, "  function %s: %lld runs, %.3f ms/run\n", k.c_str(),
                   static_cast<long long>(v.second),
                   v.first / static_cast<double>(std::max<int64_t>(v.second, 1)));
    std::fprintf(stderr, "  by op kind:\n");
    for (auto& [k, v] : top(by_kind, 40))
      std::fprintf(stderr, "  %10.2f ms %5.1f%% %8lld calls  %s\n", v.first, 100 * v.first / total,
                   static_cast<long long>(v.second), k.c_str());
    std::fprintf(stderr, "  top steps:\n");
    for (auto& [k, v] : top(by_step, 40))
      std::fprintf(stderr, "  %10.2f ms %5.1f%% %8lld calls  %s\n", v.first, 100 * v.first / total,
                   static_cast<long long>(v.second), k.c_str());
  }
};
Profile& global_profile() {
  static Profile p;
  return p;
}

Plan::~Plan() {
  if (!profile || prof_runs == 0) return;
  Profile& pr = global_profile();
  std::lock_guard<std::mutex> lk(pr.mu);
  double sum = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& st = steps[i];
    std::string kind =
        st.fused ? std::string("fusion")
                 : std::string(op_mnemonic(st.op->kind)) + (st.kind == StepKind::kRef    ? " [ref]"
                                                            : st.kind == StepKind::kView ? " [view]"
                                                                                         : "");
    auto& k = pr.by_kind[kind];
    k.first += prof_ms[i];
    k.second += prof_runs;
    auto& s = pr.by_step[st.label];
    s.first += prof_ms[i];
    s.second += prof_runs;
    sum += prof_ms[i];
  }
  auto& f = pr.by_func[func->name];
  f.first += sum;
  f.second += prof_runs;
}

size_t type_bytes(const hlo::Type& t) {
  return static_cast<size_t>(t.numel()) * dtype_size(t.dtype());
}

// First-fit offsets for arena buffers, largest first; buffers whose [start, end] intervals
// overlap never share bytes.
size_t assign_offsets(std::vector<Buffer>& bufs) {
  std::vector<int> order;
  for (size_t i = 0; i < bufs.size(); ++i)
    if (!bufs[i].fresh && bufs[i].bytes > 0) order.push_back(static_cast<int>(i));
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return bufs[a].bytes > bufs[b].bytes; });
  std::vector<int> placed;
  size_t total = 0;
  for (int b : order) {
    Buffer& B = bufs[b];
    std::vector<std::pair<size_t, size_t>> busy;  // [offset, offset + size)
    for (int p : placed) {
      const Buffer& P = bufs[p];
      if (P.start <= B.end && B.start <= P.end)
        busy.push_back({P.offset, P.offset + align_up(P.bytes)});
    }
    std::sort(busy.begin(), busy.end());
    size_t off = 0, need = align_up(B.bytes);
    for (auto [lo, hi] : busy) {
      if (off + need <= lo) break;
      off = std::max(off, hi);
    }
    B.offset = off;
    total = std::max(total, off + need);
    placed.push_back(b);
  }
  return total;
}

std::unique_ptr<Plan> build_plan(const hlo::Func& f) {
  auto plan = std::make_unique<Plan>();
  Plan& P = *plan;
  P.func = &f;
  const char* chk = std::getenv("NETSPEC_CPU_CHECK");
  P.check = chk && *chk && std::string_view(chk) != "0";
  const char* prof = std::getenv("NETSPEC_PROFILE");
  P.profile = prof && *prof && std::string_view(prof) != "0";
  auto new_val = [&](const hlo::Value* v) {
    int id = static_cast<int>(P.vals.size());
    P.vals.push_back({});
    P.vals.back().type = v->type;
    P.ids[v] = id;
    return id;
  };
  for (size_t i = 0; i < f.num_args(); ++i) {
    int id = new_val(f.arg(i));
    P.vals[id].src = Src::kArg;
    P.vals[id].arg = static_cast<int>(i);
  }
  const Compiler* table = compiler_table();
  auto id_of = [&](const hlo::Value* v) -> int {
    auto it = P.ids.find(v);
    return it == P.ids.end() ? -1 : it->second;
  };
  const char* nofuse = std::getenv("NETSPEC_NO_FUSION");
  if (!(nofuse && *nofuse && std::string_view(nofuse) != "0"))
    P.fusion = find_fusion_groups(*f.body);
  // Kernel reverses read only by one convolution are folded into it (the VJP's flipped weights).
  std::unordered_map<const hlo::Op*, Compiled> conv_rev;  // conv -> kernel reading w directly
  std::unordered_set<const hlo::Op*> absorbed;            // those reverse ops: no step of their own
  {
    std::unordered_map<const hlo::Value*, int> uses;
    hlo::walk(*f.body, [&](const hlo::Op& o) {
      for (auto* v : o.operands) ++uses[v];
    });
    for (const auto& up : f.body->ops) {
      const hlo::Op& op = *up;
      if (op.kind != OpKind::kConvolution || op.operands.size() != 2) continue;
      if (uses[op.operand(1)] != 1 || !all_tensors(op)) continue;
      if (auto c = compile_conv_rhs_reversed(op)) {  // nullopt unless operand 1 is a reverse
        conv_rev.emplace(&op, std::move(*c));
        absorbed.insert(op.operand(1)->def);
      }
    }
  }
  for (const auto& up : f.body->ops) {
    const hlo::Op& op = *up;
    if (absorbed.count(&op)) continue;
    if (op.kind == OpKind::kFuncReturn || op.kind == OpKind::kReturn) {
      for (auto* v : op.operands) {
        int id = id_of(v);
        if (id < 0 || P.vals[id].src == Src::kTuple) P.whole_on_ref = true;
        P.results.push_back(id);
      }
      break;
    }
    if (op.kind == OpKind::kTuple) {
      int id = new_val(op.result());
      P.vals[id].src = Src::kTuple;
      for (auto* v : op.operands) P.vals[id].tuple_elems.push_back(id_of(v));
      continue;
    }
    if (op.kind == OpKind::kGetTupleElement) {
      int t = id_of(op.operand(0));
      int64_t idx = op.attrs.get_int_or("index", -1);
      if (t < 0 || P.vals[t].src != Src::kTuple || idx < 0 ||
          idx >= static_cast<int64_t>(P.vals[t].tuple_elems.size())) {
        P.whole_on_ref = true;
        break;
      }
      P.ids[op.result()] = P.vals[t].tuple_elems[static_cast<size_t>(idx)];
      continue;
    }
    if (P.fusion.skip_bcast.count(&op)) continue;
    if (auto mem = P.fusion.member_of.find(&op); mem != P.fusion.member_of.end()) {
      const size_t gi = static_cast<size_t>(mem->second);
      if (P.fusion.last_op_of[gi] != &op) continue;  // the group runs at its last op
      const FusedGroup& g = P.fusion.groups[gi];
      Step st;
      st.op = &op;
      st.fused = &g;
      st.kind = StepKind::kFast;
      for (const hlo::Value* v : g.ins) {
        int id = id_of(v);
        if (id < 0 || P.vals[id].src == Src::kTuple)
          fail("cpu", "fusion group input {} has no value (planner bug)", v->type.str());
        st.ins.push_back(id);
      }
      for (const hlo::Value* v : g.outs) st.outs.push_back(new_val(v));
      st.compiled = compile_fused(g);
      if (P.profile) {
        st.label = fmt::format("fusion[{} ops:", g.ops.size());
        for (const hlo::Op* m : g.ops) st.label += " " + std::string(op_mnemonic(m->kind));
        st.label += "] -> " + op.result(0)->type.str();
      }
      P.steps.push_back(std::move(st));
      continue;
    }
    Step st;
    st.op = &op;
    auto folded = conv_rev.find(&op);
    if (folded != conv_rev.end()) st.absorbed_reverse = op.operand(1)->def;
    bool tensors_only = true;
    for (auto* v : op.operands) {
      if (st.absorbed_reverse && st.ins.size() == 1) v = st.absorbed_reverse->operand(0);
      int id = id_of(v);
      if (id < 0 || P.vals[id].src == Src::kTuple) tensors_only = false;
      st.ins.push_back(id);
    }
    for (const auto& r : op.results)
      if (!r->type.is_tensor()) tensors_only = false;
    if (!tensors_only && op.kind != OpKind::kAllReduce) {
      P.whole_on_ref = true;
      break;
    }
    for (const auto& r : op.results) st.outs.push_back(new_val(r.get()));
    // Ops without operands or regions (constant, iota) are evaluated once, here.
    if ((op.kind == OpKind::kConstant || op.kind == OpKind::kIota) && ref::kernel_for(op.kind)) {
      ref::RunContext ctx;
      std::vector<Tensor> out = ref::kernel_for(op.kind)(op, {}, ctx);
      P.vals[st.outs[0]].src = Src::kConst;
      P.vals[st.outs[0]].constant = std::move(out.at(0));
      continue;
    }
    std::optional<Compiled> c;
    if (folded != conv_rev.end()) {
      c = std::move(folded->second);
    } else if (Compiler comp = table[static_cast<size_t>(op.kind)]; comp && all_tensors(op)) {
      c = comp(op);
    }
    if (c) {
      st.kind = c->view ? StepKind::kView : StepKind::kFast;
      st.compiled = std::move(*c);
    } else {
      st.kind = StepKind::kRef;
      st.ref_kernel = ref::kernel_for(op.kind);
    }
    if (P.profile) {
      st.label = std::string(op_mnemonic(op.kind)) + (st.kind == StepKind::kRef    ? " [ref] "
                                                      : st.kind == StepKind::kView ? " [view] "
                                                                                   : " ");
      for (size_t i = 0; i < op.operands.size(); ++i)
        st.label += (i ? ", " : "") + op.operand(i)->type.str();
      st.label += " -> " + op.result(0)->type.str();
      if (op.kind == OpKind::kConvolution)
        st.label +=
            fmt::format(" bgc={} fgc={} lhs_dil={}", op.attrs.get_int_or("batch_group_count", 1),
                        op.attrs.get_int_or("feature_group_count", 1),
                        fmt::join(i64s_attr(op, "lhs_dilation"), "x"));
    }
    P.steps.push_back(std::move(st));
  }
  if (P.whole_on_ref) {
    P.stats.whole_function_on_ref = true;
    return plan;
  }
  // Liveness: last step that reads each value (uses inside regions count for the owning step).
  const int n_steps = static_cast<int>(P.steps.size());
  for (int s = 0; s < n_steps; ++s) {
    Step& st = P.steps[static_cast<size_t>(s)];
    auto use = [&](int id) {
      if (id < 0) return;
      P.vals[id].last_use = std::max(P.vals[id].last_use, s);
      for (int e : P.vals[id].tuple_elems) P.vals[e].last_use = std::max(P.vals[e].last_use, s);
    };
    for (int id : st.ins) use(id);
    for (const auto& r : st.op->regions)
      hlo::walk(*r, [&](const hlo::Op& inner) {
        for (auto* v : inner.operands) use(id_of(v));
      });
  }
  for (int id : P.results) P.vals[id].last_use = n_steps;
  // Buffers, with in-place reuse of a dying operand's buffer for pointwise kernels.
  for (int s = 0; s < n_steps; ++s) {
    Step& st = P.steps[static_cast<size_t>(s)];
    ++P.stats.steps;
    if (st.kind == StepKind::kRef) {
      ++P.stats.ref_steps;
      std::string name(op_mnemonic(st.op->kind));
      if (P.stats.fallback_ops.find(name) == std::string::npos)
        P.stats.fallback_ops += (P.stats.fallback_ops.empty() ? "" : ",") + name;
      continue;  // results are kDynamic
    }
    ++P.stats.fast_steps;
    if (st.kind == StepKind::kView) {
      int r = st.outs[0], src = st.ins[0];
      P.vals[r].src = Src::kView;
      P.vals[r].view_of = src;
      ++P.stats.views;
      // A view (also a view of a view) keeps its root's arena buffer alive while it is live.
      const ValInfo& S = P.vals[src];
      if (S.src == Src::kBuffer || (S.src == Src::kView && S.buffer >= 0)) {
        P.vals[r].buffer = S.buffer;
        Buffer& b = P.buffers[static_cast<size_t>(P.vals[src].buffer)];
        b.end = std::max(b.end, std::max(P.vals[r].last_use, s));
      }
      continue;
    }
    std::vector<int> claimed;
    for (int r : st.outs) {
      ValInfo& R = P.vals[r];
      R.src = Src::kBuffer;
      size_t bytes = type_bytes(R.type);
      P.stats.value_bytes += bytes;
      int end = std::max(R.last_use, s);
      if (st.compiled.pointwise && bytes > 0) {
        for (size_t oi = 0; oi < st.ins.size(); ++oi) {
          const int o = st.ins[oi];
          const auto& na = st.compiled.no_alias;
          if (std::find(na.begin(), na.end(), static_cast<int>(oi)) != na.end()) continue;
          const ValInfo& O = P.vals[o];
          bool owns = O.src == Src::kBuffer || (O.src == Src::kView && O.buffer >= 0);
          if (!owns || type_bytes(O.type) != bytes) continue;
          Buffer& b = P.buffers[static_cast<size_t>(O.buffer)];
          if (b.end != s || std::count(claimed.begin(), claimed.end(), O.buffer)) continue;
          R.buffer = O.buffer;
          b.end = end;
          claimed.push_back(O.buffer);
          ++P.stats.inplace;
          break;
        }
      }
      if (R.buffer < 0) {
        R.buffer = static_cast<int>(P.buffers.size());
        P.buffers.push_back({bytes, s, end, bytes == 0, 0});
      }
    }
    if (st.compiled.scratch_bytes > 0) {
      st.scratch = static_cast<int>(P.buffers.size());
      P.buffers.push_back({st.compiled.scratch_bytes, s, s, false, 0});
    }
  }
  for (int id : P.results) {
    int v = id;
    while (P.vals[v].src == Src::kView) v = P.vals[v].view_of;
    if (P.vals[v].src == Src::kBuffer)
      P.buffers[static_cast<size_t>(P.vals[v].buffer)].fresh = true;
  }
  // Non-arena values are dropped after their last use so their memory goes early.
  for (size_t id = 0; id < P.vals.size(); ++id) {
    const ValInfo& V = P.vals[id];
    if ((V.src == Src::kDynamic || V.src == Src::kView) && V.last_use >= 0 && V.last_use < n_steps)
      P.steps[static_cast<size_t>(V.last_use)].release.push_back(static_cast<int>(id));
  }
  P.prof_ms.assign(P.steps.size(), 0.0);
  P.arena_bytes = assign_offsets(P.buffers);
  P.stats.arena_bytes = P.arena_bytes;
  return plan;
}

// Per-replica run state: the arena and the value slots.
struct State {
  std::mutex mu;
  std::shared_ptr<uint8_t[]> arena;
  std::vector<Tensor> vals;
  std::vector<Tensor> arena_views;  // prebuilt tensors over the arena, per value id
};

std::shared_ptr<uint8_t[]> aligned_storage(size_t bytes) {
  void* p = std::aligned_alloc(kAlign, std::max(align_up(bytes), kAlign));
  if (!p) throw std::bad_alloc();
  return std::shared_ptr<uint8_t[]>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
}

void init_state(const Plan& P, State& S) {
  S.arena = aligned_storage(P.arena_bytes);
  S.vals.assign(P.vals.size(), Tensor());
  S.arena_views.assign(P.vals.size(), Tensor());
  for (size_t id = 0; id < P.vals.size(); ++id) {
    const ValInfo& V = P.vals[id];
    if (V.src != Src::kBuffer) continue;
    const Buffer& b = P.buffers[static_cast<size_t>(V.buffer)];
    if (b.fresh) continue;
    S.arena_views[id] = Tensor::wrap(V.type.dtype(), V.type.shape(),
                                     std::shared_ptr<uint8_t[]>(S.arena, S.arena.get() + b.offset));
  }
}

// Lets region-carrying ref kernels (while, if, ...) read this plan's values.
class PlanScope final : public ref::Scope {
 public:
  PlanScope(const Plan& p, const std::vector<Tensor>& vals) : p_(p), vals_(vals) {}
  const Tensor* find_local(const hlo::Value* v) const override {
    auto it = p_.ids.find(v);
    if (it == p_.ids.end()) return nullptr;
    const Tensor& t = vals_[static_cast<size_t>(it->second)];
    return t.defined() ? &t : nullptr;
  }

 private:
  const Plan& p_;
  const std::vector<Tensor>& vals_;
};

// Largest |a - b| scaled by (1 + max |b|) for floats; 0 or 1 (bytes differ) otherwise.
double tensor_diff(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return 1e300;
  if (!is_float(a.dtype())) return a.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) ? 1 : 0;
  double d = 0, m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.as_double(i), y = b.as_double(i);
    if (std::isnan(x) != std::isnan(y)) return 1e300;
    if (!std::isnan(x)) d = std::max(d, std::abs(x - y));
    if (std::isfinite(y)) m = std::max(m, std::abs(y));
  }
  return d / (1 + m);
}

double check_tolerance(DType t) { return t == DType::kF64 ? 1e-9 : is_float(t) ? 2e-3 : 0; }

// Check mode (NETSPEC_CPU_CHECK=1): a fast step must match its ref kernel on the same operands,
// and every operand must still hold what its producer wrote (catches buffers reused while live).
struct Checker {
  const Plan& P;
  std::vector<Tensor> snap;   // a copy of each value as produced
  std::vector<int> producer;  // step index that produced each value

  // After the step, operands that share storage with a result (in place) are exempt.
  void operands_intact(const Step& st, size_t index, const std::vector<Tensor>& vals,
                       bool after = false) const {
    for (size_t i = 0; i < st.ins.size(); ++i) {
      int id = st.ins[i];
      const void* p = vals[static_cast<size_t>(id)].raw();
      bool shared = false;
      for (int o : st.outs) shared = shared || (p && vals[static_cast<size_t>(o)].raw() == p);
      if (after && shared) continue;
      if (producer[static_cast<size_t>(id)] < 0) continue;  // argument or constant
      const Tensor& s = snap[static_cast<size_t>(id)];
      if (tensor_diff(vals[static_cast<size_t>(id)], s) != 0)
        fail("cpu check",
             "step {} ({}): operand {} ({}, from step {} {}) was overwritten {} "
             "(buffer reused while live)",
             index, st.op->name(), i, s.type_str(), producer[static_cast<size_t>(id)],
             P.steps[static_cast<size_t>(producer[static_cast<size_t>(id)])].op->name(),
             after ? "while this step ran" : "before this step");
    }
  }
  std::vector<Tensor> ref_outputs(const Step& st, const std::vector<Tensor>& vals) const {
    if (st.fused) {  // run the group's ops one by one on the ref kernels
      std::unordered_map<const hlo::Value*, Tensor> env;
      for (size_t k = 0; k < st.ins.size(); ++k)
        env[st.fused->ins[k]] = vals[static_cast<size_t>(st.ins[k])].clone();
      ref::RunContext ctx;
      for (const hlo::Op* op : st.fused->ops) {
        std::vector<Tensor> in_t;
        for (auto* v : op->operands) in_t.push_back(env.at(v));
        env[op->result(0)] = ref::kernel_for(op->kind)(*op, in_t, ctx).at(0);
      }
      std::vector<Tensor> out;
      for (const hlo::Value* v : st.fused->outs) out.push_back(env.at(v));
      return out;
    }
    ref::Kernel k = ref::kernel_for(st.op->kind);
    if (!k || !st.op->regions.empty()) return {};
    std::vector<Tensor> in_t;
    for (int id : st.ins) in_t.push_back(vals[static_cast<size_t>(id)].clone());
    ref::RunContext ctx;
    if (st.absorbed_reverse)
      in_t[1] = ref::kernel_for(OpKind::kReverse)(*st.absorbed_reverse, {in_t[1]}, ctx).at(0);
    return k(*st.op, in_t, ctx);
  }
  void compare(const Step& st, size_t index, const std::vector<Tensor>& want,
               const std::vector<Tensor>& vals) const {
    for (size_t i = 0; i < want.size() && i < st.outs.size(); ++i) {
      const Tensor& got = vals[static_cast<size_t>(st.outs[i])];
      double d = tensor_diff(got, want[i]);
      if (d > check_tolerance(got.dtype())) {
        std::string operands;
        for (int id : st.ins)
          operands += (operands.empty() ? "" : ", ") + vals[static_cast<size_t>(id)].type_str();
        if (std::getenv("NETSPEC_CPU_CHECK_DUMP"))
          std::fprintf(stderr, "%s\n", hlo::print_func(*P.func).c_str());
        fail("cpu check",
             "step {} ({}({}) -> {}): fast kernel result {} disagrees with ref "
             "(got scaled max diff {:.3e}, expected <= {:.1e})",
             index, st.op->name(), operands, got.type_str(), i, d, check_tolerance(got.dtype()));
      }
    }
  }
  void record(const Step& st, size_t index, const std::vector<Tensor>& vals) {
    for (int id : st.outs) {
      snap[static_cast<size_t>(id)] = vals[static_cast<size_t>(id)].clone();
      producer[static_cast<size_t>(id)] = static_cast<int>(index);
    }
  }
};

std::vector<Tensor> run_plan(const Plan& P, State& S, const std::vector<Tensor>& inputs,
                             ref::RunContext& ctx) {
  if (P.whole_on_ref) return ref::run_func(*P.func, inputs, ctx);
  check_inputs(*P.func, inputs);
  if (!S.arena) init_state(P, S);
  const uint8_t* arena_lo = S.arena.get();
  const uint8_t* arena_hi = arena_lo + P.arena_bytes;
  auto in_arena = [&](const Tensor& t) {
    auto* p = static_cast<const uint8_t*>(t.raw());
    return p && p >= arena_lo && p < arena_hi;
  };
  // Bind arguments, constants, arena tensors and fresh result storage.
  std::vector<std::shared_ptr<uint8_t[]>> fresh(P.buffers.size());
  for (size_t id = 0; id < P.vals.size(); ++id) {
    const ValInfo& V = P.vals[id];
    switch (V.src) {
      case Src::kArg:
        S.vals[id] = inputs[static_cast<size_t>(V.arg)];
        break;
      case Src::kConst:
        S.vals[id] = V.constant;
        break;
      case Src::kBuffer: {
        const Buffer& b = P.buffers[static_cast<size_t>(V.buffer)];
        if (!b.fresh) {
          S.vals[id] = S.arena_views[id];
        } else {
          auto& store = fresh[static_cast<size_t>(V.buffer)];
          if (!store) store = aligned_storage(b.bytes);
          S.vals[id] = Tensor::wrap(V.type.dtype(), V.type.shape(), store);
        }
        break;
      }
      default:
        break;
    }
  }
  std::vector<const Tensor*> ins;
  std::vector<Tensor*> outs;
  std::optional<Checker> check;
  if (P.check)
    check.emplace(
        Checker{P, std::vector<Tensor>(P.vals.size()), std::vector<int>(P.vals.size(), -1)});
  std::vector<double> prof_ms(P.profile ? P.steps.size() : 0);
  for (size_t si = 0; si < P.steps.size(); ++si) {
    const Step& st = P.steps[si];
    const auto prof_t0 =
        P.profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    std::vector<Tensor> want;
    if (check) {
      check->operands_intact(st, si, S.vals);
      if (st.kind == StepKind::kFast) want = check->ref_outputs(st, S.vals);
    }
    switch (st.kind) {
      case StepKind::kView: {
        const Tensor& src = S.vals[static_cast<size_t>(st.ins[0])];
        S.vals[static_cast<size_t>(st.outs[0])] =
            src.reshaped(P.vals[static_cast<size_t>(st.outs[0])].type.shape());
        break;
      }
      case StepKind::kFast: {
        ins.clear();
        outs.clear();
        for (int id : st.ins) ins.push_back(&S.vals[static_cast<size_t>(id)]);
        for (int id : st.outs) outs.push_back(&S.vals[static_cast<size_t>(id)]);
        uint8_t* scratch = st.scratch >= 0
                               ? S.arena.get() + P.buffers[static_cast<size_t>(st.scratch)].offset
                               : nullptr;
        st.compiled.run(RunArgs{ins.data(), outs.data(), scratch});
        break;
      }
      case StepKind::kRef: {
        if (!st.ref_kernel) fail("cpu", "no kernel for {}", st.op->name());
        std::vector<Tensor> in_t;
        in_t.reserve(st.ins.size());
        for (int id : st.ins) in_t.push_back(S.vals[static_cast<size_t>(id)]);
        PlanScope scope(P, S.vals);
        const ref::Scope* saved = ctx.scope;
        if (!st.op->regions.empty()) ctx.scope = &scope;
        std::vector<Tensor> out_t;
        try {
          out_t = st.ref_kernel(*st.op, in_t, ctx);
        } catch (...) {
          ctx.scope = saved;
          throw;
        }
        ctx.scope = saved;
        if (out_t.size() != st.outs.size())
          fail("cpu", "{} kernel returned {} result(s) (expected {})", st.op->name(), out_t.size(),
               st.outs.size());
        // A ref result that aliases an arena operand must not outlive that buffer's slot.
        for (size_t i = 0; i < out_t.size(); ++i)
          S.vals[static_cast<size_t>(st.outs[i])] =
              in_arena(out_t[i]) ? out_t[i].clone() : std::move(out_t[i]);
        break;
      }
    }
    if (P.profile)
      prof_ms[si] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - prof_t0)
              .count();
    if (check) {
      check->operands_intact(st, si, S.vals, /*after=*/true);
      check->compare(st, si, want, S.vals);
      check->record(st, si, S.vals);
    }
    for (int id : st.release) S.vals[static_cast<size_t>(id)] = Tensor();
  }
  if (P.profile) {
    std::lock_guard<std::mutex> lk(P.prof_mu);
    for (size_t i = 0; i < prof_ms.size(); ++i) P.prof_ms[i] += prof_ms[i];
    ++P.prof_runs;
  }
  std::vector<Tensor> results;
  for (int id : P.results) {
    const Tensor& t = S.vals[static_cast<size_t>(id)];
    results.push_back(in_arena(t) ? t.clone() : t);
  }
  // Drop references to inputs and results so the caller owns them alone.
  for (size_t id = 0; id < P.vals.size(); ++id)
    if (P.vals[id].src != Src::kBuffer || P.buffers[static_cast<size_t>(P.vals[id].buffer)].fresh)
      S.vals[id] = Tensor();
  return results;
}

class CpuExecutable final : public Executable {
 public:
  explicit CpuExecutable(std::shared_ptr<const hlo::Module> m) : module_(std::move(m)) {}

  std::vector<Tensor> run(std::string_view entry, const std::vector<Tensor>& inputs) override {
    Entry& e = entry_for(entry);
    State& s = state_for(e, 0);
    std::lock_guard<std::mutex> lk(s.mu);
    ref::RunContext ctx;
    return run_plan(*e.plan, s, inputs, ctx);
  }

  // One replica of a group whose other members run elsewhere (another process): state slot 0.
  std::vector<Tensor> run_as_replica(std::string_view entry, const std::vector<Tensor>& inputs,
                                     Communicator& comm, int replica_id) override {
    Entry& e = entry_for(entry);
    State& s = state_for(e, 0);
    std::lock_guard<std::mutex> lk(s.mu);
    ref::RunContext ctx;
    ctx.replica_id = replica_id;
    ctx.comm = &comm;
    return run_plan(*e.plan, s, inputs, ctx);
  }

  std::vector<std::vector<Tensor>> run_replicated(
      std::string_view entry, const std::vector<std::vector<Tensor>>& inputs) override {
    int n = static_cast<int>(inputs.size());
    if (n == 0) fail("run", "run_replicated needs at least one replica (got 0)");
    Entry& e = entry_for(entry);
    for (int r = 0; r < n; ++r) state_for(e, r);
    return run_on_replicas(n, [&](int r, ReplicaComm& comm) {
      State& s = state_for(e, r);
      std::lock_guard<std::mutex> lk(s.mu);
      ref::RunContext ctx;
      ctx.replica_id = r;
      ctx.comm = &comm;
      return run_plan(*e.plan, s, inputs[static_cast<size_t>(r)], ctx);
    });
  }

 private:
  struct Entry {
    std::unique_ptr<Plan> plan;
    std::map<int, std::unique_ptr<State>> states;
  };

  Entry& entry_for(std::string_view name) {
    const hlo::Func* f = module_->entry(name);
    std::lock_guard<std::mutex> lk(mu_);
    auto& e = entries_[f];
    if (!e.plan) e.plan = build_plan(*f);
    return e;
  }
  State& state_for(Entry& e, int replica) {
    std::lock_guard<std::mutex> lk(mu_);
    auto& s = e.states[replica];
    if (!s) s = std::make_unique<State>();
    return *s;
  }

  std::shared_ptr<const hlo::Module> module_;
  std::mutex mu_;
  std::map<const hlo::Func*, Entry> entries_;
};

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::unique_ptr<Executable> load(std::shared_ptr<const hlo::Module> module) override {
    return std::make_unique<CpuExecutable>(std::move(module));
  }
};

// glibc gives large freed blocks back to the OS (mmap threshold, trim), so a training loop that
// frees and reallocates its results every step page-faults each time; keep them in the heap.
void tune_malloc_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("NETSPEC_NO_MALLOPT")) return;
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
}

}  // namespace

PlanStats plan_stats(const hlo::Func& f) { return build_plan(f)->stats; }

bool all_tensors(const hlo::Op& op) {
  for (auto* v : op.operands)
    if (!v->type.is_tensor()) return false;
  for (const auto& r : op.results)
    if (!r->type.is_tensor()) return false;
  return true;
}

}  // namespace netspec::exec::cpu

namespace netspec::exec {
std::unique_ptr<Backend> make_cpu_backend() {
  cpu::tune_malloc_once();
  return std::make_unique<cpu::CpuBackend>();
}
}  // namespace netspec::exec
