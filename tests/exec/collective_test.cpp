// all_reduce across replica threads on every backend: all replicas, explicit replica groups,
// a max combiner, and the replicated mean-gradient check (per-shard MSE gradient of a linear
// model, all_reduce(sum) / N over 4 replicas == the single-replica gradient on the whole batch).
#include "exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::OpKind;

class CollectiveTest : public BackendTest {
 protected:
  std::vector<std::vector<Tensor>> run_replicas(std::shared_ptr<hlo::Module> m,
                                                const std::vector<std::vector<Tensor>>& inputs) {
    auto exe = exec::make_backend(backend())->load(std::move(m));
    return exe->run_replicated("main", inputs);
  }
};

TEST_P(CollectiveTest, AllReduceSumOverAllReplicas) {
  auto m = make_module({Type::tensor(DType::kF32, {2})}, [](Builder& b, const Values& a) {
    return b.all_reduce({a[0]}, {}, OpKind::kAdd);
  });
  std::vector<std::vector<Tensor>> in;
  for (int r = 0; r < 4; ++r) in.push_back({f32({2}, {double(r), 10.0 * r})});
  auto out = run_replicas(m, in);
  ASSERT_EQ(out.size(), 4u);
  for (const auto& o : out) expect_equal(o.at(0), f32({2}, {6, 60}));
}

TEST_P(CollectiveTest, AllReduceReplicaGroupsAndMax) {
  auto m = make_module({Type::tensor(DType::kI32, {}), Type::tensor(DType::kF32, {})},
                       [](Builder& b, const Values& a) {
                         Values s = b.all_reduce({a[0]}, {{0, 2}, {1, 3}}, OpKind::kAdd);
                         Values mx = b.all_reduce({a[1]}, {}, OpKind::kMaximum);
                         return Values{s[0], mx[0]};
                       });
  std::vector<std::vector<Tensor>> in;
  for (int r = 0; r < 4; ++r) in.push_back({i32({}, {1 << r}), f32({}, {r == 2 ? 9.0 : -1.0 * r})});
  auto out = run_replicas(m, in);
  ASSERT_EQ(out.size(), 4u);
  const int64_t want[4] = {1 + 4, 2 + 8, 1 + 4, 2 + 8};
  for (int r = 0; r < 4; ++r) {
    expect_equal(out[r].at(0), i32({}, {want[r]}));
    expect_equal(out[r].at(1), f32({}, {9}));
  }
}

TEST_P(CollectiveTest, SingleReplicaAllReduceIsIdentity) {
  auto m = make_module({Type::tensor(DType::kF32, {2})}, [](Builder& b, const Values& a) {
    return b.all_reduce({a[0]}, {}, OpKind::kAdd);
  });
  expect_equal(run_module(backend(), m, {f32({2}, {1.5, -2})}).at(0), f32({2}, {1.5, -2}));
}

// grad of L = mean_i (x_i . w + c - y_i)^2 over a batch of B rows:
//   r = X w + c - y;  dw = (2/B) X^T r;  dc = (2/B) sum(r). With replicas, each shard's
// gradient is all_reduce(sum)-ed and divided by the replica count.
std::shared_ptr<hlo::Module> mse_grad_module(int64_t rows, int64_t d, int replicas) {
  std::vector<Type> ts = {Type::tensor(DType::kF32, {d}), Type::tensor(DType::kF32, {}),
                          Type::tensor(DType::kF32, {rows, d}), Type::tensor(DType::kF32, {rows})};
  return make_module(ts, [=](Builder& b, const Values& a) {
    Value *w = a[0], *c = a[1], *x = a[2], *y = a[3];
    hlo::DotDims xw;
    xw.lhs_contracting = {1};
    xw.rhs_contracting = {0};
    Value* pred = b.add(b.dot_general(x, w, xw), b.broadcast_in_dim(c, {rows}, {}));
    Value* r = b.subtract(pred, y);
    hlo::DotDims xtr;
    xtr.lhs_contracting = {0};
    xtr.rhs_contracting = {0};
    Value* scale = b.scalar(2.0 / static_cast<double>(rows), DType::kF32);
    Value* dw = b.multiply(b.dot_general(r, x, xtr), b.broadcast_in_dim(scale, {d}, {}));
    Value* dc = b.multiply(b.reduce(r, b.scalar(0, DType::kF32), {0}, OpKind::kAdd), scale);
    Values g = {dw, dc};
    if (replicas > 1) {
      g = b.all_reduce(g, {}, OpKind::kAdd);
      Value* inv = b.scalar(1.0 / replicas, DType::kF32);
      g = {b.multiply(g[0], b.broadcast_in_dim(inv, {d}, {})), b.multiply(g[1], inv)};
    }
    return g;
  });
}

TEST_P(CollectiveTest, ReplicatedMeanGradientMatchesFullBatch) {
  const int64_t n = 4, shard = 3, batch = n * shard, d = 2;
  std::vector<double> xs, ys;
  for (int64_t i = 0; i < batch; ++i) {
    xs.push_back(0.5 * static_cast<double>(i) - 2);
    xs.push_back(static_cast<double>((i * 7) % 5) - 1.5);
    ys.push_back(static_cast<double>(i % 4) - 0.25 * static_cast<double>(i));
  }
  Tensor w = f32({d}, {0.3, -1.2}), c = f32({}, {0.7});
  auto full = run_module(backend(), mse_grad_module(batch, d, 1),
                         {w, c, f32({batch, d}, xs), f32({batch}, ys)});
  // Hand check of the full-batch gradient in double precision.
  double gw0 = 0, gw1 = 0, gc = 0;
  for (int64_t i = 0; i < batch; ++i) {
    double r = xs[2 * i] * 0.3 + xs[2 * i + 1] * -1.2 + 0.7 - ys[i];
    gw0 += 2.0 / batch * r * xs[2 * i];
    gw1 += 2.0 / batch * r * xs[2 * i + 1];
    gc += 2.0 / batch * r;
  }
  expect_near(full.at(0), f32({d}, {gw0, gw1}), 1e-5, 1e-5);
  expect_near(full.at(1), f32({}, {gc}), 1e-5, 1e-5);

  std::vector<std::vector<Tensor>> in;
  for (int64_t r = 0; r < n; ++r) {
    std::vector<double> xr(xs.begin() + r * shard * d, xs.begin() + (r + 1) * shard * d);
    std::vector<double> yr(ys.begin() + r * shard, ys.begin() + (r + 1) * shard);
    in.push_back({w, c, f32({shard, d}, xr), f32({shard}, yr)});
  }
  auto out = run_replicas(mse_grad_module(shard, d, static_cast<int>(n)), in);
  ASSERT_EQ(out.size(), static_cast<size_t>(n));
  for (const auto& o : out) {
    expect_near(o.at(0), full.at(0), 1e-5, 1e-5);
    expect_near(o.at(1), full.at(1), 1e-5, 1e-5);
  }
}

NETSPEC_ON_BACKENDS(CollectiveTest);

}  // namespace
}  // namespace netspec::testing
