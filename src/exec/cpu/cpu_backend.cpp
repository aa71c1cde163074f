// The cpu executor: plans each function once (plan.cpp, see cpu_backend.h), then runs the plan
// with one arena per replica state. Steady-state runs allocate only the function results (and
// whatever ref fallback kernels allocate).
#include "exec/cpu/cpu_backend.h"

#include <malloc.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "exec/backend.h"
#include "exec/cpu/plan/plan.h"

namespace netspec::exec::cpu {
namespace {

// Arenas of 2 MiB or more are 2 MiB aligned and advised to use transparent huge pages (Linux's
// default THP mode is "madvise": nothing gets them unasked): the step walks the whole arena
// (vit-cifar-tiny on an AMD EPYC: median 71 vs 79 ms over six alternations). A touched 2 MiB
// page is resident whole, so max RSS grows where scratch is never written (resnet18-cifar +95
// MiB). NETSPEC_NO_HUGEPAGES=1 leaves the arena to malloc. Function results, allocated every
// run, never ask for them (`arena` false): a 2 MiB-aligned block lands on fresh heap pages run
// after run, each first touch zeroing a whole huge page (bench_fusion's 2 MiB GELU result: 6.7
// instead of 0.9 ms per call).
std::shared_ptr<uint8_t[]> aligned_storage(size_t bytes, bool arena) {
  constexpr size_t kHuge = size_t{2} << 20;
  static const bool huge_ok = [] {
    const char* e = std::getenv("NETSPEC_NO_HUGEPAGES");
    return !(e && *e && std::string_view(e) != "0");
  }();
  const bool huge = arena && huge_ok && bytes >= kHuge;
  const size_t align = huge ? kHuge : kAlign;
  const size_t size = (std::max(bytes, align) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, size);
  if (!p)
    throw Error(fmt::format("[cpu] out of memory allocating {} {:.2f} GiB",
                            arena ? "an arena of" : "a buffer of",
                            static_cast<double>(size) / double(1ull << 30)));
  if (huge) madvise(p, size, MADV_HUGEPAGE);  // advice only: failure changes nothing
  return std::shared_ptr<uint8_t[]>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
}

std::atomic<int64_t> kept_refresh_count{0};  // KeptCopy::refreshed calls, process-wide

}  // namespace

void KeptCopy::refreshed(uint64_t g) {
  gen = g;
  ++kept_refresh_count;
}

uint8_t* KeptCopy::get(size_t n) {
  if (!data || bytes < n) {
    data = aligned_storage(n, false);
    bytes = n;
    gen = 0;
  }
  return data.get();
}

namespace {

void init_state(const Plan& P, State& S) {
  S.arena = aligned_storage(P.arena_bytes, true);
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

// Lets region-carrying ref kernels (while, if, ...) and sub-plans read this plan's values (and,
// through `parent`, those of the enclosing plans).
class PlanScope final : public ref::Scope {
 public:
  PlanScope(const Plan& p, const std::vector<Tensor>& vals, const ref::Scope* parent)
      : ref::Scope(parent), p_(p), vals_(vals) {}
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

bool in_arena(const Plan& P, const State& S, const Tensor& t) {
  auto* p = static_cast<const uint8_t*>(t.raw());
  return p && p >= S.arena.get() && p < S.arena.get() + P.arena_bytes;
}

// Binds arguments, captures, constants, arena tensors and fresh result storage to their slots.
void bind_values(const Plan& P, State& S, const Tensor* const* inputs, const ref::Scope* outer) {
  std::vector<std::shared_ptr<uint8_t[]>> fresh(P.sub ? 0 : P.buffers.size());
  for (size_t id = 0; id < P.vals.size(); ++id) {
    const ValInfo& V = P.vals[id];
    switch (V.src) {
      case Src::kArg:
        S.vals[id] = *inputs[static_cast<size_t>(V.arg)];
        break;
      case Src::kCapture: {
        const Tensor* t = outer ? outer->find(V.capture) : nullptr;
        if (!t)
          fail("cpu", "a region reads a {} value that is not bound (planner bug)", V.type.str());
        S.vals[id] = *t;
        break;
      }
      case Src::kConst:
        S.vals[id] = V.constant;
        break;
      case Src::kBuffer: {
        const Buffer& b = P.buffers[static_cast<size_t>(V.buffer)];
        if (!b.fresh) {
          S.vals[id] = S.arena_views[id];
        } else {
          auto& store = fresh[static_cast<size_t>(V.buffer)];
          if (!store) store = aligned_storage(b.bytes, false);
          S.vals[id] = Tensor::wrap(V.type.dtype(), V.type.shape(), store);
        }
        break;
      }
      default:
        break;
    }
  }
}

// A ref fallback step: region-carrying kernels read the plan's values through a PlanScope.
void run_ref_step(const Plan& P, State& S, const Step& st, ref::RunContext& ctx,
                  const PlanScope& scope) {
  if (!st.ref_kernel) fail("cpu", "no kernel for {}", st.op->name());
  std::vector<Tensor> in_t;
  in_t.reserve(st.ins.size());
  for (int id : st.ins) in_t.push_back(S.vals[static_cast<size_t>(id)]);
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
        in_arena(P, S, out_t[i]) ? out_t[i].clone() : std::move(out_t[i]);
}

// The kept number of value `id` for a step's RunArgs::in_gen (0: may change between calls).
uint64_t kept_gen(const Plan& P, int id, const uint64_t* arg_gens) {
  const ValInfo& V = P.vals[static_cast<size_t>(id)];
  if (V.src == Src::kConst) return P.const_gen;
  return V.src == Src::kArg && arg_gens ? arg_gens[V.arg] : 0;
}

}  // namespace

void run_steps(const Plan& P, State& S, const Tensor* const* inputs, ref::RunContext& ctx,
               const ref::Scope* outer, const uint64_t* arg_gens) {
  if (!S.arena) init_state(P, S);
  if (S.kept.size() != P.steps.size()) S.kept.resize(P.steps.size());
  bind_values(P, S, inputs, outer);
  PlanScope scope(P, S.vals, outer);
  std::vector<const Tensor*> ins;
  std::vector<Tensor*> outs;
  std::vector<uint64_t> gens;
  std::optional<Checker> check;
  if (P.check)
    check.emplace(Checker{P, std::vector<Tensor>(P.vals.size()),
                          std::vector<int>(P.vals.size(), -1), &scope});
  std::vector<double> prof_ms(P.profile ? P.steps.size() : 0);
  for (size_t si = 0; si < P.steps.size(); ++si) {
    const Step& st = P.steps[si];
    if (st.skip) {
      for (int id : st.release) S.vals[static_cast<size_t>(id)] = Tensor();
      continue;
    }
    const auto prof_t0 =
        P.profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    std::vector<Tensor> want;
    if (check) {
      check->operands_intact(st, si, S.vals);
      if (st.kind == StepKind::kFast || st.kind == StepKind::kRegion)
        want = check->ref_outputs(st, S.vals);
    }
    switch (st.kind) {
      case StepKind::kView: {
        const Tensor& src = S.vals[static_cast<size_t>(st.ins[0])];
        const Shape& shape = P.vals[static_cast<size_t>(st.outs[0])].type.shape();
        if (st.compiled.view_offset) {  // a contiguous slice at a (run-time) offset
          ins.clear();
          for (int id : st.ins) ins.push_back(&S.vals[static_cast<size_t>(id)]);
          S.vals[static_cast<size_t>(st.outs[0])] =
              src.view_at(st.compiled.view_offset(RunArgs{ins.data(), nullptr, nullptr}), shape);
        } else {
          S.vals[static_cast<size_t>(st.outs[0])] = src.reshaped(shape);
        }
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
        RunArgs args{ins.data(), outs.data(), scratch};
        if (st.compiled.keeps) {  // a kernel that may reuse what it derived from kept operands
          gens.clear();
          for (int id : st.ins) gens.push_back(kept_gen(P, id, arg_gens));
          args.in_gen = gens.data();
          args.kept = &S.kept[si];
        }
        st.compiled.run(args);
        break;
      }
      case StepKind::kRegion:
        run_region_step(P, S, st, ctx, scope);
        break;
      case StepKind::kRef:
        run_ref_step(P, S, st, ctx, scope);
        break;
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
    if (P.prof_runs++ == 0)
      P.prof_first_ms = prof_ms;
    else
      for (size_t i = 0; i < prof_ms.size(); ++i) P.prof_ms[i] += prof_ms[i];
  }
}

// Drops S's references to inputs, captures and results so their owners hold them alone.
void drop_refs(const Plan& P, State& S) {
  for (size_t id = 0; id < P.vals.size() && id < S.vals.size(); ++id)
    if (P.vals[id].src != Src::kBuffer || P.buffers[static_cast<size_t>(P.vals[id].buffer)].fresh)
      S.vals[id] = Tensor();
}

namespace {

// run_plan for Executable::run_donating: once the inputs check, the donated ones are taken out
// of `inputs`; those P writes results into must be storage no other tensor shares (it would see
// the write), so shared ones are copied first (a session's first step, whose state still shares
// the caller's tensors, or one tensor passed for two arguments).
// `kept` (may be null or short): Executable::run_kept's numbers per argument.
std::vector<Tensor> run_plan(const Plan& P, State& S, const std::vector<Tensor>& inputs,
                             ref::RunContext& ctx, const std::vector<uint64_t>* kept = nullptr);
std::vector<Tensor> run_plan_donating(const Plan& P, State& S, std::vector<Tensor>& inputs,
                                      ref::RunContext& ctx,
                                      const std::vector<uint64_t>* kept = nullptr) {
  if (P.whole_on_ref || P.donated.empty()) return run_plan(P, S, inputs, ctx, kept);
  check_inputs(*P.func, inputs);
  std::vector<Tensor> own(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k)
    own[k] = P.donated[k] ? std::move(inputs[k]) : inputs[k];
  for (int a : P.donated_args) {
    Tensor& t = own[static_cast<size_t>(a)];
    if (!t.storage_unique()) t = t.clone();
  }
  return run_plan(P, S, own, ctx, kept);
}

std::vector<Tensor> run_plan(const Plan& P, State& S, const std::vector<Tensor>& inputs,
                             ref::RunContext& ctx, const std::vector<uint64_t>* kept) {
  if (P.whole_on_ref) return ref::run_func(*P.func, inputs, ctx);
  check_inputs(*P.func, inputs);
  std::vector<const Tensor*> in_ptrs;
  for (const Tensor& t : inputs) in_ptrs.push_back(&t);
  std::vector<uint64_t> gens;
  if (kept) {
    gens = *kept;
    gens.resize(inputs.size(), 0);
  }
  run_steps(P, S, in_ptrs.data(), ctx, nullptr, kept ? gens.data() : nullptr);
  std::vector<Tensor> results;
  for (int id : P.results) {
    const Tensor& t = S.vals[static_cast<size_t>(id)];
    results.push_back(in_arena(P, S, t) ? t.clone() : t);
  }
  drop_refs(P, S);
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

  std::vector<Tensor> run_donating(std::string_view entry, std::vector<Tensor>& inputs,
                                   const std::vector<bool>& donate) override {
    Entry& e = entry_for(entry, donate);
    State& s = state_for(e, 0);
    std::lock_guard<std::mutex> lk(s.mu);
    ref::RunContext ctx;
    return run_plan_donating(*e.plan, s, inputs, ctx);
  }

  std::vector<std::vector<Tensor>> run_replicated_donating(
      std::string_view entry, std::vector<std::vector<Tensor>>& inputs,
      const std::vector<bool>& donate) override {
    return replicated(entry_for(entry, donate), inputs, true);
  }

  std::vector<Tensor> run_kept(std::string_view entry, std::vector<Tensor>& inputs,
                               const std::vector<bool>& donate,
                               const std::vector<uint64_t>& kept) override {
    Entry& e = entry_for(entry, donate);
    State& s = state_for(e, 0);
    std::lock_guard<std::mutex> lk(s.mu);
    ref::RunContext ctx;
    return run_plan_donating(*e.plan, s, inputs, ctx, &kept);
  }

  std::vector<std::vector<Tensor>> run_replicated_kept(
      std::string_view entry, std::vector<std::vector<Tensor>>& inputs,
      const std::vector<bool>& donate, const std::vector<uint64_t>& kept) override {
    return replicated(entry_for(entry, donate), inputs, true, &kept);
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

  // L replica threads here (state slots 0..L-1), the other processes' through `outer`.
  std::vector<std::vector<Tensor>> run_as_replicas(std::string_view entry,
                                                   const std::vector<std::vector<Tensor>>& inputs,
                                                   Communicator& outer, int rank) override {
    const int n = static_cast<int>(inputs.size());
    if (n == 1) return {run_as_replica(entry, inputs[0], outer, rank)};
    Entry& e = entry_for(entry);
    for (int r = 0; r < n; ++r) state_for(e, r);
    return run_on_replicas(n, [&](int r, ReplicaComm& local) {
      TwoLevelComm comm(local, outer, rank, r);
      State& s = state_for(e, r);
      std::lock_guard<std::mutex> lk(s.mu);
      ref::RunContext ctx;
      ctx.replica_id = rank * n + r;
      ctx.comm = &comm;
      return run_plan(*e.plan, s, inputs[static_cast<size_t>(r)], ctx);
    });
  }

  std::vector<std::vector<Tensor>> run_replicated(
      std::string_view entry, const std::vector<std::vector<Tensor>>& inputs) override {
    std::vector<std::vector<Tensor>> in = inputs;
    return replicated(entry_for(entry), in, false);
  }

 private:
  struct Entry {
    std::unique_ptr<Plan> plan;
    std::map<int, std::unique_ptr<State>> states;
  };

  // inputs.size() replicas on threads; `donating`: run_plan_donating (each replica's donated
  // inputs are taken out of its list).
  std::vector<std::vector<Tensor>> replicated(Entry& e, std::vector<std::vector<Tensor>>& inputs,
                                              bool donating,
                                              const std::vector<uint64_t>* kept = nullptr) {
    int n = static_cast<int>(inputs.size());
    if (n == 0) fail("run", "run_replicated needs at least one replica (got 0)");
    for (int r = 0; r < n; ++r) state_for(e, r);
    return run_on_replicas(n, [&](int r, ReplicaComm& comm) {
      State& s = state_for(e, r);
      std::lock_guard<std::mutex> lk(s.mu);
      ref::RunContext ctx;
      ctx.replica_id = r;
      ctx.comm = &comm;
      std::vector<Tensor>& in = inputs[static_cast<size_t>(r)];
      return donating ? run_plan_donating(*e.plan, s, in, ctx, kept)
                      : run_plan(*e.plan, s, in, ctx, kept);
    });
  }

  // One plan per function and set of donated arguments (no flag set: the plain run()'s plan).
  // NETSPEC_NO_DONATION=1 plans every run as run() does (A/B: fresh results every step).
  Entry& entry_for(std::string_view name, std::vector<bool> donated = {}) {
    const hlo::Func* f = module_->entry(name);
    static const bool no_donation = [] {
      const char* e = std::getenv("NETSPEC_NO_DONATION");
      return e && *e && std::string_view(e) != "0";
    }();
    donated.resize(f->num_args(), false);
    if (no_donation || std::find(donated.begin(), donated.end(), true) == donated.end())
      donated.clear();
    std::lock_guard<std::mutex> lk(mu_);
    auto& e = entries_[{f, donated}];
    if (!e.plan) e.plan = build_plan(*f, donated);
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
  std::map<std::pair<const hlo::Func*, std::vector<bool>>, Entry> entries_;
};

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  // kept_refreshes: forms derived from kept operands (re)computed, process-wide (KeptCopy).
  std::map<std::string, int64_t> counters() const override {
    return {{"kept_refreshes", kept_refresh_count.load()}};
  }
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

bool all_tensors(const hlo::Op& op) {
  for (auto* v : op.operands)
    if (!v->type.is_tensor()) return false;
  for (const auto& r : op.results)
    if (!r->type.is_tensor()) return false;
  return true;
}

}  // namespace netspec::exec::cpu

namespace netspec::exec {
NETSPEC_REGISTER_BACKEND(cpu, [](const BackendOptions&) -> std::unique_ptr<Backend> {
  cpu::tune_malloc_once();
  return std::make_unique<cpu::CpuBackend>();
})
}  // namespace netspec::exec
