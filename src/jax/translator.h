// One StableHLO op -> one line of jax.lax / jax.numpy (the translation table of the JAX emitter).
// Regions (reduce bodies, while/if branches) become nested Python functions; reductions whose
// body is a single add / max / min / multiply with a constant identity init become JAX's monoid
// reductions (reduce_sum, reduce_window_max ...), which jax.grad can differentiate. Calls of
// functions with a custom VJP become jax.custom_vjp with netspec's backward translated.
#pragma once
#include <fmt/format.h>

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "autodiff/vjp.h"
#include "core/tensor.h"
#include "hlo/ir.h"

namespace netspec::jax {

// Python expression of a dense constant: jnp.full(...) for splats, jnp.array([...]) otherwise.
std::string constant_expr(const Tensor& t);

class Translator {
 public:
  Translator(std::map<std::string, std::string>& callees, const hlo::Module& m)
      : callees_(callees), module_(m) {}
  void bind(const hlo::Value* v, std::string name) { names_[v] = std::move(name); }
  std::string name(const hlo::Value* v) const;
  void line(const std::string& s) { lines_.push_back(std::string(4 * depth_, ' ') + s); }
  void indent(int d) { depth_ += d; }
  // Emits the op (after any nested region functions) and names its results.
  void op(const hlo::Op& op);
  std::string text() const;

 private:
  enum class Pack { kPlain, kOneTuple, kTwoTuples, kNone };
  std::string fresh(const char* prefix) { return fmt::format("{}{}", prefix, next_++); }
  std::string expr(const hlo::Op& op);
  std::string region(const hlo::Block& r, Pack pack, bool ret_tuple);
  std::string reduce(const hlo::Op& op);
  std::string reduce_window(const hlo::Op& op);
  std::string sort(const hlo::Op& op);
  std::string gather_scatter(const hlo::Op& op);
  std::string convolution(const hlo::Op& op);
  std::string call(const hlo::Op& op);
  using ReturnFn = std::function<std::string(const Translator&, const hlo::Op& ret)>;
  std::string function_def(const hlo::Func& f, const std::string& py, const ReturnFn& ret);
  std::string custom_vjp_backward(const hlo::Func& f, const autodiff::CustomVjpFn& fn,
                                  const std::string& py);
  std::string operands(const hlo::Op& op, size_t from = 0, size_t n = SIZE_MAX) const;

  std::map<std::string, std::string>& callees_;
  const hlo::Module& module_;
  std::unordered_map<const hlo::Value*, std::string> names_;
  std::vector<std::string> lines_;
  int depth_ = 0, next_ = 0;
};

}  // namespace netspec::jax
