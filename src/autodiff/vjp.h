// Reverse-mode autodiff at code-generation time. vjp(f) builds, in f's module, a function
// (x..., ybar...) -> (y..., xbar...) whose backward pass is ordinary StableHLO ops derived from
// one VJP rule per op (src/autodiff/vjp_<family>.cpp). Custom VJPs: a func.call whose callee has
// a registered backward builder is differentiated by that builder instead of the callee's ops
// (see docs/autodiff.md). An active op without a rule is an Error naming the op.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/builder.h"
#include "hlo/ir.h"

namespace netspec::autodiff {

// What a custom backward builder receives. All values live in the function being generated:
// `args` and `results` are the forward call's operands and results (reuse them, or recompute on
// purpose), `result_cots` the cotangents of the results (never null: zeros where none flows).
struct CustomVjpArgs {
  std::vector<hlo::Value*> args;
  std::vector<hlo::Value*> results;
  std::vector<hlo::Value*> result_cots;
  std::vector<bool> wants;  // per arg: is its cotangent needed? (skip work where false)
};
// Returns one cotangent per argument (nullptr = zero / not needed), built with `b`.
using CustomVjpFn =
    std::function<std::vector<hlo::Value*>(hlo::Builder& b, const CustomVjpArgs& a)>;

// Global registry keyed by callee name. A call to @name (or @prefix__anything, looked up as
// `prefix` when `name` itself is not registered) uses the registered backward. Thread-safe.
void register_custom_vjp(const std::string& key, CustomVjpFn fn);
bool unregister_custom_vjp(const std::string& key);
const CustomVjpFn* find_custom_vjp(std::string_view callee_name);

// For layers: emits `func.call @name(args)` at b's position, creating the private function @name
// from `forward` on first use (same name = same function: callers keep names unique per
// signature), and registers `backward` for it. Returns the call's results.
std::vector<hlo::Value*> call_with_custom_vjp(hlo::Builder& b, const std::string& name,
                                              const std::vector<hlo::Value*>& args,
                                              const hlo::RegionFn& forward, CustomVjpFn backward);

// x with a zero cotangent (JAX's stop_gradient): an identity call to @stop_gradient__<type>
// whose custom VJP returns none. For values whose gradient cancels exactly, like the max a
// softmax subtracts (softmax(s - m) does not depend on m), so the backward skips its path.
hlo::Value* stop_gradient(hlo::Builder& b, hlo::Value* x);

struct VjpOptions {
  std::string name;     // name of the generated function; default "<f>_vjp"
  bool cleanup = true;  // run hlo::run_cleanup on the generated function
  // Per-call custom VJPs by callee name, consulted before the global registry.
  std::map<std::string, CustomVjpFn> custom;
};

// Builds (x..., ybar...) -> (y..., xbar_i for i in diff_inputs) in f's module (public) and
// returns it. Every f result gets a cotangent input (non-float results too: it is ignored).
// Non-float diff inputs are refused. Calls without a custom VJP are inlined first, so the
// backward reuses the callee's forward values.
hlo::Func* vjp(const hlo::Func& f, const std::vector<size_t>& diff_inputs,
               const VjpOptions& opts = {});

// True when the element type (or every tuple element) carries cotangents (f16/bf16/f32/f64).
bool is_differentiable_type(const hlo::Type& t);

}  // namespace netspec::autodiff
