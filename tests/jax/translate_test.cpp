// The per-op table through translate(): small IR functions and the exact Python their ops
// become (monoid reductions with and without an identity init, an inline scalar, a descending
// sort's temporary, a while with a static trip count as fori_loop), and the refusals, which name
// the op and say why.
#include "jax/translate.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hlo/builder.h"
#include "tests/error_of.h"

namespace netspec::jax {
namespace {

using hlo::Builder;
using hlo::OpKind;
using hlo::Type;
using hlo::Value;
using Values = std::vector<Value*>;
using BodyFn = std::function<Values(Builder&, const Values&)>;

// main(x, y, ...)'s body as one layer group `g`: the group's Python source.
std::string translate_one(const std::vector<Type>& in, const BodyFn& body) {
  hlo::Module m;
  hlo::Func* f = m.add_func("main", in);
  Builder b(f->body.get());
  Values args;
  std::vector<ArgRef> refs;
  for (size_t i = 0; i < in.size(); ++i) {
    args.push_back(f->arg(i));
    refs.push_back({"", std::string(1, static_cast<char>('x' + i))});
  }
  b.func_return(body(b, args));
  std::map<std::string, std::string> callees;
  PyFunc pf = translate(*f, refs, {{"g", "", 0, f->body->ops.size() - 1}}, callees);
  EXPECT_EQ(pf.defs.size(), 1u);
  return pf.defs.empty() ? "" : pf.defs[0];
}

const Type kF23 = Type::tensor(DType::kF32, {2, 3});

TEST(JaxTranslate, ElementwiseAndDot) {
  std::string py =
      translate_one({kF23, Type::tensor(DType::kF32, {3, 4})}, [](Builder& b, const Values& a) {
        Value* d = b.dot_general(a[0], a[1], {{}, {}, {1}, {0}});
        Value* th = b.tanh(d);
        return Values{b.add(th, b.logistic(d))};
      });
  EXPECT_EQ(py,
            "def g(x, y):\n"
            "    t0 = lax.dot_general(x, y, (((1,), (0,)), ((), ())), "
            "precision=lax.Precision.HIGHEST, preferred_element_type=jnp.float32)\n"
            "    t1 = lax.tanh(t0)\n"
            "    t2 = lax.logistic(t0)\n"
            "    t3 = lax.add(t1, t2)\n"
            "    return t3\n");
}

// add with its identity 0: JAX's reduce_sum as it is; max with init 1 (no identity): the
// reduce_max, then one max with the init.
TEST(JaxTranslate, MonoidReductions) {
  std::string py = translate_one({kF23}, [](Builder& b, const Values& a) {
    Value* s = b.reduce(a[0], b.scalar(0, DType::kF32), {1}, OpKind::kAdd);
    Value* m = b.reduce(a[0], b.scalar(1, DType::kF32), {0}, OpKind::kMaximum);
    return Values{s, m};
  });
  EXPECT_EQ(py,
            "def g(x):\n"
            "    t0 = lax.reduce(x, np.array(0, np.float32), lax.add, (1,))\n"
            "    t1 = lax.max(lax.reduce(x, np.array(-np.inf, np.float32), lax.max, (0,)), "
            "jnp.array(1, jnp.float32))\n"
            "    return t0, t1\n");
}

// JAX sorts ascending: a GT comparator sorts the negated key (a temporary) and negates it back;
// `i < 3` counted from 0 by 1 is a fori_loop of 3 trips.
TEST(JaxTranslate, DescendingSortAndCountedLoop) {
  std::string py = translate_one({Type::tensor(DType::kF32, {5})}, [](Builder& b, const Values& a) {
    Values s = b.sort({a[0]}, 0, true, [](Builder& r, const Values& v) {
      return Values{r.compare(v[0], v[1], "GT")};
    });
    auto cond = [](Builder& r, const Values& v) {
      return Values{r.compare(v[0], r.scalar(3, DType::kI32), "LT")};
    };
    auto body = [](Builder& r, const Values& v) {
      Value* next = r.add(v[0], r.scalar(1, DType::kI32));
      return Values{next, r.multiply(v[1], v[1])};
    };
    return Values{b.while_({b.scalar(0, DType::kI32), s[0]}, cond, body)[1]};
  });
  EXPECT_EQ(
      py,
      "def g(x):\n"
      "    t0 = lax.sort((lax.neg(x),), dimension=0, is_stable=True, num_keys=1)\n"
      "    t1, = (lax.neg(t0[0]),)\n"
      "    def _r2(s):\n"
      "        a3, a4, = s\n"
      "        t5 = lax.add(a3, jnp.array(1, jnp.int32))\n"
      "        t6 = lax.mul(a4, a4)\n"
      "        return (t5, t6,)\n"
      "    t7, t8 = lax.fori_loop(0, 3, lambda _, s: _r2(s), (jnp.array(0, jnp.int32), t1,))\n"
      "    return t8\n");
}

TEST(JaxTranslate, RefusedOpsNameThemselvesAndSayWhy) {
  EXPECT_EQ(test_util::error_of([] {
              translate_one({kF23}, [](Builder& b, const Values& a) {
                return b.all_reduce({a[0]}, {}, OpKind::kAdd);
              });
            }),
            "[emit jax] stablehlo.all_reduce has no JAX translation (got it in a forward, loss or "
            "optimizer): replicas (gradient averaging, synchronised BN) exist only in netspec's "
            "data parallel train_step; the program is one replica");
  std::string e = test_util::error_of([] {
    translate_one({Type::tensor(DType::kUI64, {2})}, [](Builder& b, const Values& a) {
      return Values{b.rng_bit_generator(a[0], Type::tensor(DType::kUI32, {4})).second};
    });
  });
  EXPECT_NE(e.find("stablehlo.rng_bit_generator has no JAX translation"), std::string::npos) << e;
  EXPECT_NE(e.find("takes its randomness as inputs"), std::string::npos) << e;
}

}  // namespace
}  // namespace netspec::jax
