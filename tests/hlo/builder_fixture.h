// The hlo tests' shared fixture: a module with one @main of the given argument types and a
// builder at its body, plus short type makers.
#pragma once
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "hlo/builder.h"
#include "hlo/verify.h"

namespace netspec::hlo::testing {

inline Type t(DType d, Shape s) { return Type::tensor(d, std::move(s)); }
inline Type f32(Shape s) { return t(DType::kF32, std::move(s)); }
inline Type i32(Shape s) { return t(DType::kI32, std::move(s)); }

struct Fx {
  Module m;
  Func* f;
  Builder b{nullptr};
  explicit Fx(std::vector<Type> args) {
    f = m.add_func("main", args);
    b.set_block(f->body.get());
  }
  Value* arg(size_t i) { return f->arg(i); }
  // Ends @main with no results and expects the module to verify.
  void check() {
    b.func_return({});
    EXPECT_NO_THROW(verify_module(m));
  }
};

}  // namespace netspec::hlo::testing
