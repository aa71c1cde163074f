// The oracle case generator's plumbing: each case builds a small module with hlo::Builder (its
// entry is @main, whose arguments come from arg()), and the driver prints it to OUT/<case>.mlir
// with its inputs as OUT/<case>.in<i>.npy and its check options as OUT/<case>.json (read by
// compare.py). Cases register themselves with ORACLE_CASE(name) { ... }.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "hlo/builder.h"
#include "hlo/ir.h"

namespace netspec::oracles {

using hlo::Builder;
using hlo::I64s;
using hlo::OpKind;
using hlo::Type;
using hlo::Value;

struct CaseCtx {
  hlo::Module m;
  hlo::Func* f = nullptr;
  Builder b{nullptr};
  std::vector<Tensor> inputs;
  nlohmann::json meta = nlohmann::json::object();
  uint64_t rng_state = 0;

  explicit CaseCtx(const std::string& name);
  // A new argument of @main whose input is t.
  Value* arg(Tensor t);
  void ret(const std::vector<Value*>& xs) { b.func_return(xs); }

  // Deterministic inputs (splitmix64 + Box-Muller; the same on every machine).
  uint64_t next_u64();
  double uniform();  // [0, 1)
  Tensor normal(DType t, Shape s, double scale = 1.0);
  Tensor ints(DType t, Shape s, int64_t lo, int64_t hi);  // uniform in [lo, hi]
  Tensor bools(Shape s);
  Tensor perm_ints(DType t, int64_t n);                   // 0..n-1 shuffled (unique keys)

  // Check options for compare.py.
  void tol(double rtol, double atol) { meta["rtol"] = rtol; meta["atol"] = atol; }
  // Results that sum terms: cancellation makes a small result's relative error meaningless,
  // so an absolute tolerance joins the relative one (terms here are O(1)).
  void accum(DType d = DType::kF32) { d == DType::kF64 ? tol(1e-12, 1e-12) : tol(1e-5, 1e-5); }
  void skip(const std::string& engine, const std::string& why) { meta["skip"][engine] = why; }
  // IREE limitations found by these cases: it cannot compile the module at all, or it compiles
  // it (so still judges our text) but computes a wrong answer the spec rules out.
  void iree_cannot(const std::string& why) { skip("iree", why); }
  void iree_wrong(const std::string& why) { meta["compile_only"]["iree"] = why; }
};

using CaseFn = void (*)(CaseCtx&);
bool add_case(const char* name, CaseFn fn);
struct CaseDef {
  std::string name;
  CaseFn fn;
};
std::vector<CaseDef>& case_registry();

Type tt(DType d, Shape s);                                    // Type::tensor
Tensor vec(DType d, const std::vector<double>& v);            // 1-D tensor
Tensor mat(DType d, Shape s, const std::vector<double>& v);   // any shape
Tensor ivec(DType d, const std::vector<int64_t>& v);          // 1-D integer tensor (exact)
// All pairs (a[i], b[j]) as two flat vectors of length |a|*|b|.
std::pair<Tensor, Tensor> pairs(DType d, const std::vector<double>& a, const std::vector<double>& b);
std::pair<Tensor, Tensor> ipairs(DType d, const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// Float edge values: NaN, ±inf, ±0, halves (rounding ties), small and large magnitudes.
std::vector<double> float_edges(DType d);
// Finite moderate values for functions whose accuracy far out of range is not the point.
std::vector<double> float_moderate();
std::vector<int64_t> int_edges(DType d);

}  // namespace netspec::oracles

#define ORACLE_CASE(name)                                                            \
  static void oracle_case_##name(::netspec::oracles::CaseCtx& c);                   \
  [[maybe_unused]] static const bool oracle_reg_##name =                            \
      ::netspec::oracles::add_case(#name, oracle_case_##name);                      \
  static void oracle_case_##name([[maybe_unused]] ::netspec::oracles::CaseCtx& c)
