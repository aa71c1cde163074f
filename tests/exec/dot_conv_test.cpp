// dot_general (batching and contracting dims, zero-size contraction) and convolution (strides,
// padding, lhs/rhs dilation, window reversal, feature and batch groups, non-default dimension
// numbers) on every backend, against hand-computed sums.
#include "exec/test_util.h"

namespace netspec::testing {
namespace {

using hlo::ConvDims;
using hlo::ConvOptions;
using hlo::DotDims;

class DotConvTest : public BackendTest {
 protected:
  Tensor dot(const Tensor& x, const Tensor& y, const DotDims& d) {
    return run1({x, y},
                [&](Builder& b, const Values& a) { return Values{b.dot_general(a[0], a[1], d)}; });
  }
  Tensor conv(const Tensor& x, const Tensor& k, const ConvOptions& o) {
    return run1({x, k},
                [&](Builder& b, const Values& a) { return Values{b.convolution(a[0], a[1], o)}; });
  }
  static ConvOptions opts1d() {
    ConvOptions o;
    o.dims = ConvOptions::nchw(1);
    return o;
  }
};

TEST_P(DotConvTest, Matmul) {
  DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {0};
  expect_equal(dot(f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {7, 8, 9, 10, 11, 12}), d),
               f32({2, 2}, {58, 64, 139, 154}));
  expect_equal(dot(i32({1, 2}, {65536, 1}), i32({2, 1}, {65536, 5}), d),
               i32({1, 1}, {5}));  // wraps
}

TEST_P(DotConvTest, BatchAndTransposedContraction) {
  DotDims d;  // [b, m, k] x [b, k, n] -> [b, m, n]
  d.lhs_batching = {0};
  d.rhs_batching = {0};
  d.lhs_contracting = {2};
  d.rhs_contracting = {1};
  expect_equal(dot(f32({2, 1, 2}, {1, 2, 3, 4}), f32({2, 2, 1}, {5, 6, 7, 8}), d),
               f32({2, 1, 1}, {17, 53}));
  DotDims t;  // contract lhs dim 0 with rhs dim 0: x^T y
  t.lhs_contracting = {0};
  t.rhs_contracting = {0};
  expect_equal(dot(f32({3, 2}, {1, 2, 3, 4, 5, 6}), f32({3}, {1, 0, -1}), t), f32({2}, {-4, -4}));
  DotDims outer;  // no contraction: outer product
  expect_equal(dot(f32({2}, {1, 2}), f32({2}, {3, 4}), outer), f32({2, 2}, {3, 4, 6, 8}));
}

TEST_P(DotConvTest, ZeroSizeContractionGivesZeros) {
  DotDims d;
  d.lhs_contracting = {1};
  d.rhs_contracting = {0};
  expect_equal(dot(f32({2, 0}, {}), f32({0, 3}, {}), d), f32({2, 3}, {0, 0, 0, 0, 0, 0}));
}

TEST_P(DotConvTest, Conv1DStridePaddingDilationReversal) {
  Tensor x = f32({1, 1, 5}, {1, 2, 3, 4, 5});
  Tensor k = f32({1, 1, 3}, {1, 2, 3});
  ConvOptions o = opts1d();
  // out[x] = in[x] + 2 in[x+1] + 3 in[x+2]
  expect_equal(conv(x, k, o), f32({1, 1, 3}, {14, 20, 26}));
  o.padding = {{1, 1}};
  expect_equal(conv(x, k, o), f32({1, 1, 5}, {8, 14, 20, 26, 14}));
  o.window_strides = {2};
  expect_equal(conv(x, k, o), f32({1, 1, 3}, {8, 20, 14}));
  ConvOptions ld = opts1d();  // input dilated to [1,0,2,0,3,0,4,0,5]
  ld.lhs_dilation = {2};
  expect_equal(conv(x, k, ld), f32({1, 1, 7}, {7, 4, 11, 6, 15, 8, 19}));
  ConvOptions rd = opts1d();  // taps at 0, 2, 4
  rd.rhs_dilation = {2};
  expect_equal(conv(x, k, rd), f32({1, 1, 1}, {22}));
  ConvOptions rev = opts1d();  // kernel read as [3, 2, 1]
  rev.window_reversal = {true};
  expect_equal(conv(x, k, rev), f32({1, 1, 3}, {10, 16, 22}));
}

TEST_P(DotConvTest, Conv2DNchwStridedPadded) {
  // 3x3 input 1..9, 2x2 ones kernel, stride 2, padding 1 each side -> 2x2 window sums.
  ConvOptions o;
  o.dims = ConvOptions::nchw(2);
  o.window_strides = {2, 2};
  o.padding = {{1, 1}, {1, 1}};
  expect_equal(
      conv(f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), f32({1, 1, 2, 2}, {1, 1, 1, 1}), o),
      f32({1, 1, 2, 2}, {1, 5, 11, 28}));
}

TEST_P(DotConvTest, FeatureAndBatchGroups) {
  ConvOptions fg = opts1d();  // group g uses input feature g and output feature g
  fg.feature_group_count = 2;
  expect_equal(conv(f32({1, 2, 1}, {1, 2}), f32({2, 1, 1}, {10, 100}), fg),
               f32({1, 2, 1}, {10, 200}));
  ConvOptions bg = opts1d();  // group g uses batch g and output feature g
  bg.batch_group_count = 2;
  expect_equal(conv(f32({2, 1, 1}, {1, 2}), f32({2, 1, 1}, {10, 100}), bg),
               f32({1, 2, 1}, {10, 200}));
  // 4 batches in 2 groups, 2 output features per group: output batch ob of group g reads
  // input batch 2g + ob (values confirmed on XLA CPU).
  std::vector<double> xb = {1, 2, 3, 4, 5, 6, 7, 8};
  expect_equal(
      conv(f32({4, 1, 2}, xb), f32({4, 1, 1}, {1, 10, 100, 1000}), bg),
      f32({2, 4, 2}, {1, 2, 10, 20, 500, 600, 5000, 6000, 3, 4, 30, 40, 700, 800, 7000, 8000}));
  // Depthwise: 2 features, 2 output features per group (multiplier 2).
  ConvOptions dw = opts1d();
  dw.feature_group_count = 2;
  expect_equal(conv(f32({1, 2, 2}, {1, 2, 3, 4}), f32({4, 1, 1}, {1, 10, 100, 1000}), dw),
               f32({1, 4, 2}, {1, 2, 10, 20, 300, 400, 3000, 4000}));
}

TEST_P(DotConvTest, NhwcHwioDimensionNumbers) {
  ConvOptions o;  // input [b,0,1,f], kernel [0,1,i,o], output [b,f,0,1]
  ConvDims& d = o.dims;
  d.input_batch = 0;
  d.input_spatial = {1, 2};
  d.input_feature = 3;
  d.kernel_spatial = {0, 1};
  d.kernel_input_feature = 2;
  d.kernel_output_feature = 3;
  d.output_batch = 0;
  d.output_feature = 1;
  d.output_spatial = {2, 3};
  // input 2x2 = [[1,2],[3,4]], kernel 1x1 with two output features (1, -1).
  expect_equal(conv(f32({1, 2, 2, 1}, {1, 2, 3, 4}), f32({1, 1, 1, 2}, {1, -1}), o),
               f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4}));
  // 2x2 kernel [[1,2],[3,4]] over the whole input: 1+4+9+16.
  expect_equal(conv(f32({1, 2, 2, 1}, {1, 2, 3, 4}), f32({2, 2, 1, 1}, {1, 2, 3, 4}), o),
               f32({1, 1, 1, 1}, {30}));
}

TEST_P(DotConvTest, ZeroSizeBatch) {
  ConvOptions o = opts1d();
  expect_equal(conv(f32({0, 1, 3}, {}), f32({1, 1, 2}, {1, 1}), o), f32({0, 1, 2}, {}));
}

NETSPEC_ON_BACKENDS(DotConvTest);

}  // namespace
}  // namespace netspec::testing
