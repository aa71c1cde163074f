// The writer of the JAX emitter's Python: names the IR's values, writes lines at an indent,
// turns regions (reduce bodies, while / if branches) into nested Python functions and callees of
// func.call into top-level ones. What each op becomes is the per-op table (jax/ops.h): op()
// looks the op's rule up there, writes its expression and names its results.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/tensor.h"
#include "hlo/ir.h"

namespace netspec::jax {

// numpy's spelling of a dtype: f32 -> float32, ui8 -> uint8, i1 -> bool_, bf16 -> bfloat16.
std::string np_dtype_name(DType t);
// "jnp.float32" for f32 ...
std::string py_dtype(DType t);
// "(2, 3)" / "(4,)" / "()".
std::string py_tuple(const std::vector<int64_t>& v);
// Python expression of a dense constant: jnp.full(...) for splats, jnp.array([...]) otherwise.
std::string constant_expr(const Tensor& t);

class Translator {
 public:
  // How a region's Python function takes its arguments: plainly, as one tuple (a while's carry),
  // as two tuples (a variadic reduce's accumulators and inputs), or none (if / case branches).
  enum class Pack { kPlain, kOneTuple, kTwoTuples, kNone };
  // The return line of a function from its terminator (function_def).
  using ReturnFn = std::function<std::string(const Translator&, const hlo::Op& ret)>;

  // callees: the program's top-level functions (Python name -> source), shared by every
  // translator of one program; m: the module whose functions func.call names.
  Translator(std::map<std::string, std::string>& callees, const hlo::Module& m)
      : callees_(callees), module_(m) {}

  void bind(const hlo::Value* v, std::string name) { names_[v] = std::move(name); }
  std::string name(const hlo::Value* v) const;
  // The names of op's operands [from, from + n), comma separated.
  std::string operands(const hlo::Op& op, size_t from = 0, size_t n = SIZE_MAX) const;
  void line(const std::string& s) { lines_.push_back(std::string(4 * depth_, ' ') + s); }
  void indent(int d) { depth_ += d; }
  // A new local name: "<prefix><n>".
  std::string fresh(const char* prefix) { return fmt::format("{}{}", prefix, next_++); }

  // Writes the op (after any nested region functions) and names its results; an op whose rule
  // is a refusal throws naming it and the reason.
  void op(const hlo::Op& op);
  // Writes region r as a nested Python function and returns its name; ret_tuple: it returns a
  // tuple even for one value.
  std::string region(const hlo::Block& r, Pack pack, bool ret_tuple);
  // `def <py>(a0, ...):` with f's body, translated apart; `ret` writes the return line.
  std::string function_def(const hlo::Func& f, const std::string& py, const ReturnFn& ret);

  std::map<std::string, std::string>& callees() { return callees_; }
  const hlo::Module& module() const { return module_; }
  std::string text() const;

 private:
  std::map<std::string, std::string>& callees_;
  const hlo::Module& module_;
  std::unordered_map<const hlo::Value*, std::string> names_;
  std::vector<std::string> lines_;
  int depth_ = 0, next_ = 0;
};

}  // namespace netspec::jax
