// gather (start-index clamping, implicit index vector dim, batching dims), scatter (combiner
// region, out-of-bounds updates skipped per element, batching dims, variadic) and sort (stable,
// comparator region, multiple operands) on every backend.
#include "exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::GatherDims;
using hlo::ScatterDims;

class GatherSortTest : public BackendTest {
 protected:
  Tensor gather(const Tensor& x, const Tensor& idx, const GatherDims& d, hlo::I64s sizes) {
    return run1({x, idx}, [&](Builder& b, const Values& a) {
      return Values{b.gather(a[0], a[1], d, sizes)};
    });
  }
  Tensor scatter_add(const Tensor& x, const Tensor& idx, const Tensor& up, const ScatterDims& d) {
    return run1({x, idx, up}, [&](Builder& b, const Values& a) {
      return b.scatter({a[0]}, a[1], {a[2]}, d,
                       [](Builder& r, const Values& p) { return Values{r.add(p[0], p[1])}; });
    });
  }
};

GatherDims rows_dims() {  // take whole rows of a [n, 2] operand
  GatherDims d;
  d.offset_dims = {1};
  d.collapsed_slice_dims = {0};
  d.start_index_map = {0};
  d.index_vector_dim = 1;
  return d;
}

TEST_P(GatherSortTest, GatherRowsWithClamping) {
  Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  expect_equal(gather(x, i32({2, 1}, {2, 0}), rows_dims(), {1, 2}), f32({2, 2}, {5, 6, 1, 2}));
  // Out-of-range starts clamp into [0, 3 - 1].
  expect_equal(gather(x, i32({2, 1}, {5, -1}), rows_dims(), {1, 2}), f32({2, 2}, {5, 6, 1, 2}));
  // index_vector_dim == rank(indices): each scalar is a one-element index vector.
  expect_equal(gather(x, i64({2}, {1, 2}), rows_dims(), {1, 2}), f32({2, 2}, {3, 4, 5, 6}));
}

TEST_P(GatherSortTest, Gather2DWindowClamped) {
  Tensor x = i32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  GatherDims d;
  d.offset_dims = {1, 2};
  d.start_index_map = {0, 1};
  d.index_vector_dim = 1;
  expect_equal(gather(x, i32({1, 2}, {1, 1}), d, {2, 2}), i32({1, 2, 2}, {5, 6, 8, 9}));
  expect_equal(gather(x, i32({1, 2}, {2, 7}), d, {2, 2}), i32({1, 2, 2}, {5, 6, 8, 9}));
  expect_equal(gather(x, i32({1, 2}, {0, 1}), d, {2, 2}), i32({1, 2, 2}, {2, 3, 5, 6}));
}

TEST_P(GatherSortTest, GatherBatchingDims) {
  // result[i] = x[i, idx[i]].
  GatherDims d;
  d.collapsed_slice_dims = {1};
  d.operand_batching_dims = {0};
  d.start_indices_batching_dims = {0};
  d.start_index_map = {1};
  d.index_vector_dim = 1;
  expect_equal(gather(i32({2, 3}, {1, 2, 3, 4, 5, 6}), i32({2, 1}, {2, 0}), d, {1, 1}),
               i32({2}, {3, 4}));
}

ScatterDims scalar_scatter_dims() {
  ScatterDims d;
  d.inserted_window_dims = {0};
  d.scatter_dims_to_operand_dims = {0};
  d.index_vector_dim = 1;
  return d;
}

TEST_P(GatherSortTest, ScatterAddSkipsOutOfBounds) {
  expect_equal(scatter_add(f32({4}, {0, 0, 0, 0}), i32({5, 1}, {1, 3, 1, 4, -1}),
                           f32({5}, {10, 20, 30, 40, 50}), scalar_scatter_dims()),
               f32({4}, {0, 40, 0, 20}));
}

TEST_P(GatherSortTest, ScatterWindowsPartlyOutOfBounds) {
  ScatterDims d;
  d.update_window_dims = {1, 2};
  d.scatter_dims_to_operand_dims = {0};
  d.index_vector_dim = 1;
  // Window of 2 rows starting at row 2 of a 3-row operand: row 3 is out of bounds and
  // skipped element by element (spec), row 2 is updated.
  expect_equal(scatter_add(i32({3, 2}, {0, 0, 0, 0, 0, 0}), i32({2, 1}, {0, 2}),
                           i32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), d),
               i32({3, 2}, {1, 2, 3, 4, 5, 6}));
}

TEST_P(GatherSortTest, ScatterBatchingDimsAndReplaceBody) {
  ScatterDims d;
  d.inserted_window_dims = {1};
  d.input_batching_dims = {0};
  d.scatter_indices_batching_dims = {0};
  d.scatter_dims_to_operand_dims = {1};
  d.index_vector_dim = 1;
  Tensor got = run1({i32({2, 3}, {1, 1, 1, 1, 1, 1}), i32({2, 1}, {2, 0}), i32({2}, {7, 8})},
                    [&](Builder& b, const Values& a) {
                      return b.scatter({a[0]}, a[1], {a[2]}, d,
                                       [](Builder&, const Values& p) { return Values{p[1]}; });
                    });
  expect_equal(got, i32({2, 3}, {1, 1, 7, 8, 1, 1}));
}

TEST_P(GatherSortTest, ScatterVariadic) {
  auto got = run({f32({2}, {0, 0}), i32({2}, {0, 0}), i32({2, 1}, {1, 1}), f32({2}, {1.5, 2}),
                  i32({2}, {3, 4})},
                 [&](Builder& b, const Values& a) {
                   return b.scatter({a[0], a[1]}, a[2], {a[3], a[4]}, scalar_scatter_dims(),
                                    [](Builder& r, const Values& p) {
                                      return Values{r.add(p[0], p[2]), r.maximum(p[1], p[3])};
                                    });
                 });
  ASSERT_EQ(got.size(), 2u);
  expect_equal(got[0], f32({2}, {0, 3.5}));
  expect_equal(got[1], i32({2}, {0, 4}));
}

TEST_P(GatherSortTest, SortAscendingDescendingAndTotalOrder) {
  auto sort1 = [&](const Tensor& x, const char* dir, const char* type, int64_t dim) {
    return run1({x}, [&](Builder& b, const Values& a) {
      return b.sort({a[0]}, dim, true, [&](Builder& r, const Values& p) {
        return Values{r.compare(p[0], p[1], dir, type)};
      });
    });
  };
  expect_equal(sort1(f32({4}, {3, 1, 2, -0.0}), "LT", "", 0), f32({4}, {-0.0, 1, 2, 3}));
  expect_equal(sort1(i32({2, 3}, {3, 1, 2, 0, 5, 4}), "GT", "", 1),
               i32({2, 3}, {3, 2, 1, 5, 4, 0}));
  expect_equal(sort1(i32({2, 2}, {3, 1, 2, 5}), "LT", "", 0), i32({2, 2}, {2, 1, 3, 5}));
  expect_equal(sort1(f32({5}, {kNaN, 1, -kInf, 0.0, -0.0}), "LT", "TOTALORDER", 0),
               f32({5}, {-kInf, -0.0, 0.0, 1, kNaN}));
  expect_equal(sort1(f32({0}, {}), "LT", "", 0), f32({0}, {}));
}

TEST_P(GatherSortTest, SortIsStableWithPayload) {
  auto got = run({i32({6}, {2, 1, 2, 1, 0, 2}), f32({6}, {0, 1, 2, 3, 4, 5})}, [](Builder& b,
                                                                                  const Values& a) {
    return b.sort({a[0], a[1]}, 0, true, [](Builder& r, const Values& p) {
      return Values{r.compare(p[0], p[1], "LT")};  // keys only: equal keys keep their order
    });
  });
  ASSERT_EQ(got.size(), 2u);
  expect_equal(got[0], i32({6}, {0, 1, 1, 2, 2, 2}));
  expect_equal(got[1], f32({6}, {4, 1, 3, 0, 2, 5}));
}

TEST_P(GatherSortTest, ZeroSizeIndicesAndUpdates) {
  expect_equal(gather(f32({3, 2}, {1, 2, 3, 4, 5, 6}), i32({0, 1}, {}), rows_dims(), {1, 2}),
               f32({0, 2}, {}));
  expect_equal(scatter_add(f32({2}, {1, 2}), i32({0, 1}, {}), f32({0}, {}), scalar_scatter_dims()),
               f32({2}, {1, 2}));
}

NETSPEC_ON_BACKENDS(GatherSortTest);

}  // namespace
}  // namespace netspec::testing
