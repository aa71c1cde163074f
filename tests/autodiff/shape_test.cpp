// Shape-family VJP rules against finite differences with random shapes and attributes
// (permutations, broadcast dims, slice/pad configs incl. negative and interior padding).
#include <algorithm>
#include <numeric>

#include "test_util.h"

namespace netspec::autodiff::testing {
namespace {

Shape rand_shape(std::mt19937& g, int64_t rank, int64_t max_dim = 4) {
  Shape s;
  for (int64_t i = 0; i < rank; ++i) s.push_back(rand_int(g, 1, max_dim));
  return s;
}

// Multiplying by a fixed nonlinear factor makes every output element's gradient distinct.
Value* scramble(Builder& b, Value* v) { return b.multiply(v, b.exponential(v)); }

TEST(ShapeVjp, ReshapeTransposeReverse) {
  std::mt19937 g(10);
  for (int trial = 0; trial < 6; ++trial) {
    int64_t r = rand_int(g, 1, 4);
    Shape s = rand_shape(g, r);
    I64s perm(static_cast<size_t>(r));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), g);
    I64s rev;
    for (int64_t d = 0; d < r; ++d)
      if (rand_int(g, 0, 1)) rev.push_back(d);
    auto m = make_module({f32(s)}, [&](Builder& b, auto a) {
      Value* t = b.transpose(scramble(b, a[0]), perm);
      Value* v = b.reverse(t, rev);
      return std::vector<Value*>{b.reshape(v, {num_elements(s)})};
    });
    GradcheckOptions o;
    o.seed = static_cast<uint64_t>(trial);
    expect_grads(*m, o);
  }
}

TEST(ShapeVjp, BroadcastInDimIsAReduce) {
  std::mt19937 g(11);
  for (int trial = 0; trial < 6; ++trial) {
    // x of rank rx maps to distinct output dims (any order); some x dims of size 1 expand.
    int64_t ry = rand_int(g, 1, 4), rx = rand_int(g, 0, ry);
    Shape ys = rand_shape(g, ry);
    I64s dims(static_cast<size_t>(ry));
    std::iota(dims.begin(), dims.end(), 0);
    std::shuffle(dims.begin(), dims.end(), g);
    dims.resize(static_cast<size_t>(rx));
    Shape xs;
    for (int64_t d : dims) xs.push_back(rand_int(g, 0, 2) == 0 ? 1 : ys[static_cast<size_t>(d)]);
    auto m = make_module({f32(xs)}, [&](Builder& b, auto a) {
      return std::vector<Value*>{scramble(b, b.broadcast_in_dim(a[0], ys, dims))};
    });
    GradcheckOptions o;
    o.seed = static_cast<uint64_t>(100 + trial);
    expect_grads(*m, o);
    hlo::Func* gf = vjp(*m->find("main"), {0});
    EXPECT_EQ(count_ops(*gf, OpKind::kDotGeneral), 0);
  }
}

TEST(ShapeVjp, SliceAndPadWithRandomConfigs) {
  std::mt19937 g(12);
  for (int trial = 0; trial < 8; ++trial) {
    int64_t r = rand_int(g, 1, 3);
    Shape s = rand_shape(g, r, 6);
    I64s start, limit, strides, lo, hi, in;
    for (int64_t d = 0; d < r; ++d) {
      int64_t n = s[static_cast<size_t>(d)];
      int64_t a = rand_int(g, 0, n - 1), z = rand_int(g, a + 1, n);
      start.push_back(a);
      limit.push_back(z);
      strides.push_back(rand_int(g, 1, 3));
      lo.push_back(rand_int(g, -1, 2));
      hi.push_back(rand_int(g, -1, 2));
      in.push_back(rand_int(g, 0, 2));
    }
    bool empty = false;  // skip configs whose padded result would have a dim <= 0
    for (int64_t d = 0; d < r; ++d) {
      size_t k = static_cast<size_t>(d);
      int64_t n = (limit[k] - start[k] + strides[k] - 1) / strides[k];
      empty = empty || lo[k] + hi[k] + n + (n - 1) * in[k] <= 0;
    }
    if (empty) continue;
    auto m = make_module({f32(s), f32({})}, [&](Builder& b, auto a) {
      Value* sl = b.slice(scramble(b, a[0]), start, limit, strides);
      Value* p = b.pad(sl, a[1], lo, hi, in);
      return std::vector<Value*>{scramble(b, p)};
    });
    GradcheckOptions o;
    o.seed = static_cast<uint64_t>(200 + trial);
    // A negative pad can crop every element; then the check has nothing to compare but zeros.
    expect_grads(*m, o);
  }
}

TEST(ShapeVjp, ConcatenateAndDynamicSlices) {
  auto m = make_module({f32({2, 3}), f32({2, 2}), f32({4, 5})}, [&](Builder& b, auto a) {
    Value* c = b.concatenate({scramble(b, a[0]), a[1]}, 1);  // 2x5
    Value* i = b.constant(Tensor::from<int64_t>(DType::kI64, {}, {1}));
    Value* j = b.constant(Tensor::from<int64_t>(DType::kI64, {}, {2}));
    Value* ds = b.dynamic_slice(a[2], {i, j}, {2, 3});  // 2x3 window of a[2]
    Value* dus = b.dynamic_update_slice(
        scramble(b, a[2]), c, {j, b.constant(Tensor::from<int64_t>(DType::kI64, {}, {0}))});
    return std::vector<Value*>{scramble(b, ds), scramble(b, dus)};
  });
  expect_grads(*m);
}

}  // namespace
}  // namespace netspec::autodiff::testing
