// Helpers for the autodiff tests: build a one-function module with hlo::Builder, run the
// gradient checker on it, count ops of a kind in a generated function.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>

#include "gradcheck/gradcheck.h"
#include "autodiff/vjp.h"
#include "exec/backend.h"
#include "hlo/builder.h"
#include "hlo/passes.h"

namespace netspec::autodiff::testing {

using hlo::Builder;
using hlo::I64s;
using hlo::OpKind;
using hlo::Type;
using hlo::Value;

inline Type f32(Shape s) { return Type::tensor(DType::kF32, std::move(s)); }
inline Type f64(Shape s) { return Type::tensor(DType::kF64, std::move(s)); }
inline Type i64(Shape s) { return Type::tensor(DType::kI64, std::move(s)); }

using BodyFn = std::function<std::vector<Value*>(Builder& b, const std::vector<Value*>& args)>;

// A module with one public function @main(args) -> body(args).
inline std::unique_ptr<hlo::Module> make_module(const std::vector<Type>& args, const BodyFn& body) {
  auto m = std::make_unique<hlo::Module>();
  hlo::Func* f = m->add_func("main", args);
  Builder b(f->body.get());
  std::vector<Value*> vs;
  for (size_t i = 0; i < f->num_args(); ++i) vs.push_back(f->arg(i));
  b.func_return(body(b, vs));
  return m;
}

// Gradient-checks @main; fails the test with the report when an input is off.
inline GradcheckReport expect_grads(const hlo::Module& m, GradcheckOptions o = {}) {
  GradcheckReport r = gradcheck(m, o);
  if (std::getenv("NETSPEC_GRADCHECK_VERBOSE")) std::fprintf(stderr, "%s", r.str().c_str());
  EXPECT_FALSE(r.inputs.empty());
  EXPECT_TRUE(r.ok) << r.str();
  for (const auto& in : r.inputs) EXPECT_LE(in.max_rel, 1e-6) << r.str();
  return r;
}

inline int count_ops(const hlo::Func& f, OpKind k) {
  int n = 0;
  hlo::walk(*f.body, [&](const hlo::Op& op) { n += op.kind == k; });
  return n;
}

inline int64_t rand_int(std::mt19937& g, int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(g);
}

}  // namespace netspec::autodiff::testing
