// reduce, reduce_window, select_and_scatter, sort, gather and scatter VJPs against finite
// differences with random dimensions, windows, strides, dilations, paddings and dimension numbers.
#include <algorithm>
#include <numeric>

#include "test_util.h"

namespace netspec::autodiff::testing {
namespace {

Value* scramble(Builder& b, Value* v) { return b.multiply(v, b.exponential(v)); }

TEST(ReduceVjp, AddMaxMinMultiplyOverRandomDims) {
  std::mt19937 g(30);
  for (OpKind k : {OpKind::kAdd, OpKind::kMaximum, OpKind::kMinimum, OpKind::kMultiply}) {
    for (int trial = 0; trial < 3; ++trial) {
      int64_t r = rand_int(g, 1, 3);
      Shape s;
      for (int64_t i = 0; i < r; ++i) s.push_back(rand_int(g, 1, 4));
      I64s dims;
      for (int64_t d = 0; d < r; ++d)
        if (rand_int(g, 0, 1)) dims.push_back(d);
      double init = k == OpKind::kMultiply  ? 1
                    : k == OpKind::kMaximum ? -1e30
                    : k == OpKind::kMinimum ? 1e30
                                            : 0;
      auto m = make_module({f32(s)}, [&](Builder& b, auto a) {
        return std::vector<Value*>{
            scramble(b, b.reduce(a[0], b.scalar(init, DType::kF32), dims, k))};
      });
      GradcheckOptions o;
      o.seed = static_cast<uint64_t>(trial);
      expect_grads(*m, o);
    }
  }
  // dinit of a sum reduce: each output adds init once.
  auto m = make_module({f32({3, 2}), f32({})}, [&](Builder& b, auto a) {
    return std::vector<Value*>{scramble(b, b.reduce(a[0], a[1], {0}, OpKind::kAdd))};
  });
  expect_grads(*m);
}

TEST(WindowVjp, SumPoolWithStridesDilationsPadding) {
  std::mt19937 g(31);
  for (int trial = 0; trial < 10; ++trial) {
    int64_t r = rand_int(g, 1, 2);
    Shape s;
    hlo::WindowOptions w;
    bool empty = false;
    for (int64_t d = 0; d < r; ++d) {
      s.push_back(rand_int(g, 2, 6));
      w.window_dimensions.push_back(rand_int(g, 1, 3));
      w.window_strides.push_back(rand_int(g, 1, 3));
      w.base_dilations.push_back(rand_int(g, 1, 2));
      w.window_dilations.push_back(rand_int(g, 1, 2));
      w.padding.push_back({rand_int(g, 0, 2), rand_int(g, 0, 2)});
      int64_t full = (s.back() - 1) * w.base_dilations.back() + 1 + w.padding.back().first +
                     w.padding.back().second;
      empty = empty || full < (w.window_dimensions.back() - 1) * w.window_dilations.back() + 1;
    }
    if (empty) continue;
    SCOPED_TRACE("trial " + std::to_string(trial));
    auto m = make_module({f32(s)}, [&](Builder& b, auto a) {
      return std::vector<Value*>{
          scramble(b, b.reduce_window(a[0], b.scalar(0, DType::kF32), w, OpKind::kAdd))};
    });
    GradcheckOptions o;
    o.seed = static_cast<uint64_t>(trial);
    expect_grads(*m, o);
  }
}

TEST(WindowVjp, MaxPoolUsesSelectAndScatter) {
  std::mt19937 g(32);
  for (int trial = 0; trial < 8; ++trial) {
    Shape s{rand_int(g, 1, 2), rand_int(g, 1, 2), rand_int(g, 3, 6), rand_int(g, 3, 6)};
    hlo::WindowOptions w;
    w.window_dimensions = {1, 1, rand_int(g, 1, 3), rand_int(g, 1, 3)};
    w.window_strides = {1, 1, rand_int(g, 1, 2), rand_int(g, 1, 2)};
    // Padding below the window size: no window sees only padding (its max would be -inf).
    auto p = [&](int64_t wd) {
      return std::pair<int64_t, int64_t>{rand_int(g, 0, wd - 1), rand_int(g, 0, wd - 1)};
    };
    w.padding = {{0, 0}, {0, 0}, p(w.window_dimensions[2]), p(w.window_dimensions[3])};
    OpKind k = trial % 2 ? OpKind::kMinimum : OpKind::kMaximum;
    double init = k == OpKind::kMaximum ? -std::numeric_limits<double>::infinity()
                                        : std::numeric_limits<double>::infinity();
    auto m = make_module({f32(s)}, [&](Builder& b, auto a) {
      return std::vector<Value*>{
          scramble(b, b.reduce_window(a[0], b.scalar(init, DType::kF32), w, k))};
    });
    GradcheckOptions o;
    o.seed = static_cast<uint64_t>(trial);
    expect_grads(*m, o);
    hlo::Func* gf = vjp(*m->find("main"), {0});
    EXPECT_EQ(count_ops(*gf, OpKind::kSelectAndScatter), 1);
  }
}

TEST(WindowVjp, SelectAndScatterSourceGradient) {
  // Differentiating the max-pool gradient itself (second order): d source via reduce_window pairs.
  hlo::WindowOptions w;
  w.window_dimensions = {2, 2};
  w.window_strides = {2, 1};
  w.padding = {{0, 1}, {0, 0}};
  auto m = make_module({f32({5, 4}), f32({3, 3})}, [&](Builder& b, auto a) {
    Value* r = b.select_and_scatter(
        a[0], scramble(b, a[1]), b.scalar(0, DType::kF32), w,
        [](Builder& rb, const std::vector<Value*>& x) {
          return std::vector<Value*>{rb.compare(x[0], x[1], "GE")};
        },
        [](Builder& rb, const std::vector<Value*>& x) {
          return std::vector<Value*>{rb.add(x[0], x[1])};
        });
    return std::vector<Value*>{scramble(b, r)};
  });
  GradcheckOptions o;
  o.wrt = {1};
  expect_grads(*m, o);
}

TEST(SortVjp, PermutesCotangentsBack) {
  auto m = make_module({f32({3, 5}), f32({3, 5})}, [&](Builder& b, auto a) {
    auto r = b.sort({a[0], a[1]}, 1, true, [](Builder& rb, const std::vector<Value*>& x) {
      return std::vector<Value*>{rb.compare(x[0], x[1], "LT")};
    });
    return std::vector<Value*>{scramble(b, r[0]), scramble(b, r[1])};
  });
  expect_grads(*m);
}

TEST(GatherVjp, RowGatherAndScatterAddWithRandomIndices) {
  std::mt19937 g(33);
  for (int trial = 0; trial < 4; ++trial) {
    // Embedding-style gather: rows of a VxD table by an index vector (duplicates allowed).
    int64_t V = rand_int(g, 2, 5), D = rand_int(g, 1, 3), N = rand_int(g, 1, 6);
    std::vector<int64_t> idx(static_cast<size_t>(N));
    for (auto& i : idx) i = rand_int(g, 0, V - 1);
    hlo::GatherDims gd;
    gd.offset_dims = {1};
    gd.collapsed_slice_dims = {0};
    gd.start_index_map = {0};
    gd.index_vector_dim = 1;
    auto m = make_module({f32({V, D}), i64({N, 1})}, [&](Builder& b, auto a) {
      return std::vector<Value*>{scramble(b, b.gather(a[0], a[1], gd, {1, D}))};
    });
    GradcheckOptions o;
    o.seed = static_cast<uint64_t>(trial);
    o.fixed_inputs[1] = Tensor::from<int64_t>(DType::kI64, {N, 1}, idx);
    expect_grads(*m, o);
    hlo::Func* gf = vjp(*m->find("main"), {0});
    EXPECT_EQ(count_ops(*gf, OpKind::kScatter), 1);

    // Scatter-add of N rows into the table: d table = dy, d updates = gather(dy).
    hlo::ScatterDims sd;
    sd.update_window_dims = {1};
    sd.inserted_window_dims = {0};
    sd.scatter_dims_to_operand_dims = {0};
    sd.index_vector_dim = 1;
    auto m2 = make_module({f32({V, D}), i64({N, 1}), f32({N, D})}, [&](Builder& b, auto a) {
      auto r = b.scatter({scramble(b, a[0])}, a[1], {scramble(b, a[2])}, sd,
                         [](Builder& rb, const std::vector<Value*>& x) {
                           return std::vector<Value*>{rb.add(x[0], x[1])};
                         });
      return std::vector<Value*>{scramble(b, r[0])};
    });
    expect_grads(*m2, o);
  }
}

TEST(GatherVjp, WindowedGatherWithIndexVectorInTheMiddle) {
  // 2-D start indices with index_vector_dim = 0, slices of 2x2 windows, one collapsed dim.
  hlo::GatherDims gd;
  gd.offset_dims = {1, 2};
  gd.collapsed_slice_dims = {0};
  gd.start_index_map = {0, 2};
  gd.index_vector_dim = 0;
  auto m = make_module({f32({3, 2, 4}), i64({2, 3})}, [&](Builder& b, auto a) {
    return std::vector<Value*>{scramble(b, b.gather(a[0], a[1], gd, {1, 2, 2}))};
  });
  GradcheckOptions o;
  o.fixed_inputs[1] = Tensor::from<int64_t>(DType::kI64, {2, 3}, {0, 2, 1, 1, 0, 2});
  expect_grads(*m, o);
}

TEST(GatherVjp, RandomDimensionNumbersGatherAndScatterAdd) {
  std::mt19937 g(34);
  for (int trial = 0; trial < 12; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    int64_t r = rand_int(g, 1, 3);
    Shape os;
    for (int64_t d = 0; d < r; ++d) os.push_back(rand_int(g, 1, 4));
    // start_index_map: a random non-empty subset of operand dims in random order.
    I64s dims(static_cast<size_t>(r));
    std::iota(dims.begin(), dims.end(), 0);
    std::shuffle(dims.begin(), dims.end(), g);
    hlo::GatherDims gd;
    gd.start_index_map.assign(dims.begin(), dims.begin() + rand_int(g, 1, r));
    I64s sizes;
    for (int64_t d = 0; d < r; ++d) sizes.push_back(rand_int(g, 1, os[static_cast<size_t>(d)]));
    for (int64_t d : gd.start_index_map)  // collapse some indexed dims (slice size 1)
      if (rand_int(g, 0, 1)) {
        gd.collapsed_slice_dims.push_back(d);
        sizes[static_cast<size_t>(d)] = 1;
      }
    std::sort(gd.collapsed_slice_dims.begin(), gd.collapsed_slice_dims.end());
    // Indices: batch shape [N0(, N1)] plus the index vector at a random position.
    Shape batch;
    for (int64_t i = 0, nb = rand_int(g, 1, 2); i < nb; ++i) batch.push_back(rand_int(g, 1, 3));
    int64_t k = static_cast<int64_t>(gd.start_index_map.size());
    gd.index_vector_dim = rand_int(g, 0, static_cast<int64_t>(batch.size()));
    Shape is = batch;
    is.insert(is.begin() + gd.index_vector_dim, k);
    // offset_dims: a sorted random choice of output positions for the kept slice dims.
    int64_t n_off = r - static_cast<int64_t>(gd.collapsed_slice_dims.size());
    int64_t out_rank = static_cast<int64_t>(batch.size()) + n_off;
    I64s pos(static_cast<size_t>(out_rank));
    std::iota(pos.begin(), pos.end(), 0);
    std::shuffle(pos.begin(), pos.end(), g);
    gd.offset_dims.assign(pos.begin(), pos.begin() + n_off);
    std::sort(gd.offset_dims.begin(), gd.offset_dims.end());
    // In-range start indices (no clamping, so scatter-add is gather's exact transpose).
    std::vector<int64_t> idx(static_cast<size_t>(num_elements(is)));
    auto strides = row_major_strides(is);
    for (size_t e = 0; e < idx.size(); ++e) {
      int64_t comp =
          (static_cast<int64_t>(e) / strides[static_cast<size_t>(gd.index_vector_dim)]) % k;
      int64_t d = gd.start_index_map[static_cast<size_t>(comp)];
      idx[e] = rand_int(g, 0, os[static_cast<size_t>(d)] - sizes[static_cast<size_t>(d)]);
    }
    auto m = make_module({f32(os), i64(is)}, [&](Builder& b, auto a) {
      return std::vector<Value*>{scramble(b, b.gather(a[0], a[1], gd, sizes))};
    });
    GradcheckOptions o;
    o.seed = static_cast<uint64_t>(trial);
    o.fixed_inputs[1] = Tensor::from<int64_t>(DType::kI64, is, idx);
    expect_grads(*m, o);
    // The mirrored scatter-add: updates shaped like the gather's output.
    Shape us = m->find("main")->result_types[0].shape();
    hlo::ScatterDims sd;
    sd.update_window_dims = gd.offset_dims;
    sd.inserted_window_dims = gd.collapsed_slice_dims;
    sd.scatter_dims_to_operand_dims = gd.start_index_map;
    sd.index_vector_dim = gd.index_vector_dim;
    auto m2 = make_module({f32(os), i64(is), f32(us)}, [&](Builder& b, auto a) {
      auto res = b.scatter({scramble(b, a[0])}, a[1], {scramble(b, a[2])}, sd,
                           [](Builder& rb, const std::vector<Value*>& x) {
                             return std::vector<Value*>{rb.add(x[0], x[1])};
                           });
      return std::vector<Value*>{scramble(b, res[0])};
    });
    expect_grads(*m2, o);
  }
}

TEST(GatherVjp, ScatterReplaceZeroesOverwrittenPositions) {
  // Rows 2 and 0 of a 4x2 table are replaced by the updates: those rows get no table gradient.
  hlo::ScatterDims sd;
  sd.update_window_dims = {1};
  sd.inserted_window_dims = {0};
  sd.scatter_dims_to_operand_dims = {0};
  sd.index_vector_dim = 1;
  auto m = make_module({f32({4, 2}), i64({2, 1}), f32({2, 2})}, [&](Builder& b, auto a) {
    auto r = b.scatter(
        {a[0]}, a[1], {scramble(b, a[2])}, sd,
        [](Builder&, const std::vector<Value*>& x) { return std::vector<Value*>{x[1]}; }, false,
        true);
    return std::vector<Value*>{scramble(b, r[0])};
  });
  GradcheckOptions o;
  o.fixed_inputs[1] = Tensor::from<int64_t>(DType::kI64, {2, 1}, {2, 0});
  expect_grads(*m, o);
}

TEST(GatherVjp, BatchedGatherWithBatchingDims) {
  // Per-batch row lookup: operand [B, V, D], indices [B, N, 1] with operand/indices batch dim 0.
  hlo::GatherDims gd;
  gd.offset_dims = {2};
  gd.collapsed_slice_dims = {1};
  gd.operand_batching_dims = {0};
  gd.start_indices_batching_dims = {0};
  gd.start_index_map = {1};
  gd.index_vector_dim = 2;
  auto m = make_module({f32({2, 4, 3}), i64({2, 3, 1})}, [&](Builder& b, auto a) {
    return std::vector<Value*>{scramble(b, b.gather(a[0], a[1], gd, {1, 1, 3}))};
  });
  GradcheckOptions o;
  o.fixed_inputs[1] = Tensor::from<int64_t>(DType::kI64, {2, 3, 1}, {3, 0, 3, 1, 2, 1});
  expect_grads(*m, o);
}

TEST(CollectiveVjp, AllReduceSumTransposesToAllReduceSum) {
  // y_r = Σ_s x_s on 2 replicas: xbar_r = Σ_s ybar_s.
  auto m = make_module({f32({3})},
                       [&](Builder& b, auto a) { return b.all_reduce({a[0]}, {}, OpKind::kAdd); });
  hlo::Func* gf = vjp(*m->find("main"), {0});
  EXPECT_EQ(count_ops(*gf, OpKind::kAllReduce), 2);
  auto exe = exec::make_backend("ref")->load(std::shared_ptr<const hlo::Module>(std::move(m)));
  Tensor x0 = Tensor::from<float>(DType::kF32, {3}, {1, 2, 3}),
         x1 = Tensor::from<float>(DType::kF32, {3}, {4, 5, 6});
  Tensor y0 = Tensor::from<float>(DType::kF32, {3}, {1, 0, 2}),
         y1 = Tensor::from<float>(DType::kF32, {3}, {3, 1, -1});
  auto out = exe->run_replicated(gf->name, {{x0, y0}, {x1, y1}});
  std::vector<float> want{4, 1, 1};
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 3; ++j)
      EXPECT_FLOAT_EQ(out[static_cast<size_t>(r)][1].data<float>()[j],
                      want[static_cast<size_t>(j)]);
}

}  // namespace
}  // namespace netspec::autodiff::testing
