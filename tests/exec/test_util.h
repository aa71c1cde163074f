// Shared helpers for executor tests: build a one-function module with hlo::Builder, run it on a
// named backend, make typed tensors, and compare results exactly (NaN-aware, sign of zero
// checked) or within a tolerance. Every case is a TEST_P over the backends {"ref", "cpu"}.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "exec/backend.h"
#include "exec/cpu/cpu_backend.h"
#include "hlo/builder.h"
#include "hlo/ir.h"

namespace netspec::testing {

using hlo::Builder;
using hlo::Type;
using hlo::Value;
using Values = std::vector<Value*>;
using BodyFn = std::function<Values(Builder& b, const Values& args)>;

inline Type type_of(const Tensor& t) { return Type::tensor(t.dtype(), t.shape()); }

// module { func.func @main(<arg_types>) { body } }
inline std::shared_ptr<hlo::Module> make_module(const std::vector<Type>& arg_types,
                                                const BodyFn& body) {
  auto m = std::make_shared<hlo::Module>();
  hlo::Func* f = m->add_func("main", arg_types);
  Builder b(f->body.get());
  Values args;
  for (size_t i = 0; i < f->num_args(); ++i) args.push_back(f->arg(i));
  b.func_return(body(b, args));
  return m;
}

// The cpu planner's counters for @main taking ts (or the tensors' types) with `body`.
inline exec::cpu::PlanStats cpu_plan_stats(const std::vector<Type>& ts, const BodyFn& body) {
  return exec::cpu::plan_stats(*make_module(ts, body)->funcs[0]);
}
inline exec::cpu::PlanStats cpu_plan_stats(const std::vector<Tensor>& in, const BodyFn& body) {
  std::vector<Type> ts;
  for (const Tensor& t : in) ts.push_back(type_of(t));
  return cpu_plan_stats(ts, body);
}

inline std::vector<Tensor> run_module(const std::string& backend, std::shared_ptr<hlo::Module> m,
                                      const std::vector<Tensor>& inputs) {
  auto be = exec::make_backend(backend);
  auto exe = be->load(std::move(m));
  return exe->run("main", inputs);
}

// Builds @main taking the inputs' types, with `body`, and runs it on `backend`.
inline std::vector<Tensor> run_fn(const std::string& backend, const std::vector<Tensor>& inputs,
                                  const BodyFn& body) {
  std::vector<Type> ts;
  for (const auto& t : inputs) ts.push_back(type_of(t));
  return run_module(backend, make_module(ts, body), inputs);
}

// Typed tensor makers (values converted with static_cast).
template <typename T = double>
Tensor make(DType dt, Shape s, const std::vector<T>& v) {
  return Tensor::from<T>(dt, std::move(s), v);
}
// f32(shape, values), i32(...), ...: a tensor of that element type from values given as V.
#define NETSPEC_TENSOR_MAKER(name, dtype, V)             \
  inline Tensor name(Shape s, const std::vector<V>& v) { \
    return make<V>(DType::dtype, std::move(s), v);       \
  }
NETSPEC_TENSOR_MAKER(f32, kF32, double)
NETSPEC_TENSOR_MAKER(f64, kF64, double)
NETSPEC_TENSOR_MAKER(i32, kI32, int64_t)
NETSPEC_TENSOR_MAKER(i64, kI64, int64_t)
NETSPEC_TENSOR_MAKER(i8, kI8, int64_t)
NETSPEC_TENSOR_MAKER(ui8, kUI8, int64_t)
NETSPEC_TENSOR_MAKER(ui32, kUI32, uint64_t)
NETSPEC_TENSOR_MAKER(ui64, kUI64, uint64_t)
NETSPEC_TENSOR_MAKER(i1, kI1, int64_t)
#undef NETSPEC_TENSOR_MAKER
// f32 values drawn from `dist` by a seeded std::mt19937 (deterministic).
template <typename Dist>
Tensor random_f32_from(const Shape& s, uint32_t seed, Dist dist) {
  std::mt19937 g(seed);
  std::vector<double> v(static_cast<size_t>(num_elements(s)));
  for (double& x : v) x = dist(g);
  return f32(s, v);
}
// f32 values drawn uniformly from [lo, hi).
inline Tensor random_f32(const Shape& s, uint32_t seed, double lo = -1, double hi = 1) {
  return random_f32_from(s, seed, std::uniform_real_distribution<double>(lo, hi));
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Exact equality of type and elements; NaN equals NaN and the sign of zero must match.
inline void expect_equal(const Tensor& got, const Tensor& want, const std::string& what = "") {
  ASSERT_EQ(got.type_str(), want.type_str()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (is_float(want.dtype())) {
      double g = got.as_double(i), w = want.as_double(i);
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(g)) << what << " element " << i << ": got " << g << ", expected NaN";
      } else {
        EXPECT_EQ(g, w) << what << " element " << i;
        EXPECT_EQ(std::signbit(g), std::signbit(w)) << what << " element " << i << " sign of " << w;
      }
    } else if (want.dtype() == DType::kUI64) {
      EXPECT_EQ(static_cast<uint64_t>(got.as_int64(i)), static_cast<uint64_t>(want.as_int64(i)))
          << what << " element " << i;
    } else {
      EXPECT_EQ(got.as_int64(i), want.as_int64(i)) << what << " element " << i;
    }
  }
}

// |got - want| <= atol + rtol * |want| elementwise (NaN must match NaN).
inline void expect_near(const Tensor& got, const Tensor& want, double atol = 1e-6,
                        double rtol = 1e-6, const std::string& what = "") {
  ASSERT_EQ(got.type_str(), want.type_str()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = got.as_double(i), w = want.as_double(i);
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(g)) << what << " element " << i;
    } else if (std::isinf(w)) {
      EXPECT_EQ(g, w) << what << " element " << i;
    } else {
      EXPECT_NEAR(g, w, atol + rtol * std::fabs(w)) << what << " element " << i;
    }
  }
}

// Each result of got within rel · (1 + the largest finite |element| of want's) of want's,
// element by element (equal values, infinities included, and NaN against NaN pass): for results
// whose sums were reordered, where an element's own size says nothing of its rounding. One
// failure per result, naming how many elements are off and the first.
inline void expect_close_to_scale(const std::vector<Tensor>& got, const std::vector<Tensor>& want,
                                  double rel, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].type_str(), want[i].type_str()) << what << " result " << i;
    double scale = 0;
    for (int64_t j = 0; j < want[i].numel(); ++j) {
      const double w = want[i].as_double(j);
      if (std::isfinite(w)) scale = std::max(scale, std::fabs(w));
    }
    const double tol = rel * (1 + scale);
    int64_t bad = 0, first = -1;
    for (int64_t j = 0; j < want[i].numel(); ++j) {
      const double g = got[i].as_double(j), w = want[i].as_double(j);
      if (!(std::fabs(g - w) <= tol) && g != w && !(std::isnan(g) && std::isnan(w)) && bad++ == 0)
        first = j;
    }
    EXPECT_EQ(bad, 0) << what << " result " << i << " " << want[i].type_str() << ": " << bad
                      << " of " << want[i].numel() << " elements off by more than " << tol
                      << ", the first at " << first << ": got "
                      << (first >= 0 ? got[i].as_double(first) : 0) << ", want "
                      << (first >= 0 ? want[i].as_double(first) : 0);
  }
}

// Parameterized over the backend name.
class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  const std::string& backend() const { return GetParam(); }
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const BodyFn& body) {
    return run_fn(backend(), inputs, body);
  }
  // Single-result convenience.
  Tensor run1(const std::vector<Tensor>& inputs, const BodyFn& body) {
    auto r = run(inputs, body);
    EXPECT_EQ(r.size(), 1u);
    return r.at(0);
  }
};

}  // namespace netspec::testing

// Instantiates a BackendTest-derived suite on both executors.
#define NETSPEC_ON_BACKENDS(Suite)                                       \
  INSTANTIATE_TEST_SUITE_P(Exec, Suite, ::testing::Values("ref", "cpu"), \
                           [](const ::testing::TestParamInfo<std::string>& i) { return i.param; })
