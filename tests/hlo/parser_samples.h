// Test helper for the printer/parser tests: a module built with the Builder that uses every op
// kind in ops.def (with attributes off their defaults), and a few hand-written texts.
#pragma once
#include <cmath>
#include <limits>
#include <memory>

#include "hlo/builder.h"
#include "hlo/ir.h"

namespace netspec::hlo::testing {

inline Type f32(Shape s) { return Type::tensor(DType::kF32, std::move(s)); }
inline Type i32(Shape s) { return Type::tensor(DType::kI32, std::move(s)); }

inline std::unique_ptr<Module> all_ops_module() {
  auto m = std::make_unique<Module>();
  m->name = "all_ops";
  // helper first so Builder::call can see its signature.
  Func* h = m->add_func("helper", {f32({2, 3})}, false);
  {
    Builder b(h->body.get());
    b.func_return({b.negate(h->arg(0))});
  }
  Func* f = m->add_func("main", {f32({2, 3}), f32({2, 3}), i32({2, 3}), Type::tensor(DType::kI1, {2, 3})});
  Builder b(f->body.get());
  Value *x = f->arg(0), *y = f->arg(1), *k = f->arg(2), *p = f->arg(3);
  std::vector<Value*> keep;
  float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  keep.push_back(b.constant(Tensor::from<float>(DType::kF32, {2, 4}, {0.1f, -0.0f, nan, inf, -inf, 1e-45f,
                                                                     3.4028235e38f, 1.5f})));
  keep.push_back(b.constant(Tensor::from<double>(DType::kF64, {3}, {0.1, -2.5e-300, 1.0 / 3.0})));
  keep.push_back(b.constant(Tensor::from<int>(DType::kI1, {2}, {1, 0})));
  keep.push_back(b.constant(Tensor::from<int64_t>(DType::kI64, {2, 1}, {-9223372036854775807LL, 42})));
  keep.push_back(b.constant(Tensor::from<uint32_t>(DType::kUI32, {2}, {4294967295u, 7u})));
  keep.push_back(b.constant_splat(2.0, f32({2, 3})));
  keep.push_back(b.constant(Tensor::from<float>(DType::kF32, {300}, std::vector<float>(300, 0.0f))));
  {
    std::vector<float> big(300);
    for (size_t i = 0; i < big.size(); ++i) big[i] = 0.25f * static_cast<float>(i);
    keep.push_back(b.constant(Tensor::from<float>(DType::kF32, {3, 100}, big)));
  }
  keep.push_back(b.iota(i32({4, 2}), 1));
  for (OpKind u : {OpKind::kNegate, OpKind::kAbs, OpKind::kSign, OpKind::kExponential,
                   OpKind::kExponentialMinusOne, OpKind::kLog, OpKind::kLogPlusOne, OpKind::kLogistic,
                   OpKind::kTanh, OpKind::kErf, OpKind::kSqrt, OpKind::kRsqrt, OpKind::kCbrt, OpKind::kSine,
                   OpKind::kCosine, OpKind::kTan, OpKind::kFloor, OpKind::kCeil, OpKind::kRoundNearestAfz,
                   OpKind::kRoundNearestEven})
    keep.push_back(b.unary(u, x));
  keep.push_back(b.is_finite(x));
  keep.push_back(b.not_(k));
  keep.push_back(b.not_(p));
  keep.push_back(b.popcnt(k));
  keep.push_back(b.count_leading_zeros(k));
  keep.push_back(b.convert(x, DType::kI32));
  keep.push_back(b.bitcast_convert(x, i32({2, 3})));
  keep.push_back(b.reduce_precision(x, 5, 10));
  for (OpKind o : {OpKind::kAdd, OpKind::kSubtract, OpKind::kMultiply, OpKind::kDivide, OpKind::kRemainder,
                   OpKind::kPower, OpKind::kMaximum, OpKind::kMinimum, OpKind::kAtan2})
    keep.push_back(b.binary(o, x, y));
  for (OpKind o : {OpKind::kAnd, OpKind::kOr, OpKind::kXor, OpKind::kShiftLeft,
                   OpKind::kShiftRightArithmetic, OpKind::kShiftRightLogical})
    keep.push_back(b.binary(o, k, k));
  for (const char* d : {"EQ", "NE", "GE", "GT", "LE", "LT"}) keep.push_back(b.compare(x, y, d));
  keep.push_back(b.compare(x, y, "LT", "TOTALORDER"));
  keep.push_back(b.compare(k, k, "GE"));
  Value* zero = b.scalar(0.0, DType::kF32);
  keep.push_back(b.clamp(zero, x, b.scalar(6.0, DType::kF32)));
  keep.push_back(b.clamp(x, y, x));
  keep.push_back(b.select(p, x, y));
  keep.push_back(b.select(b.constant(Tensor::from<int>(DType::kI1, {}, {1})), x, y));
  keep.push_back(b.reshape(x, {3, 2}));
  keep.push_back(b.broadcast_in_dim(x, {2, 5, 3}, {0, 2}));
  keep.push_back(b.transpose(x, {1, 0}));
  keep.push_back(b.slice(x, {0, 1}, {2, 3}, {1, 2}));
  keep.push_back(b.slice(x, {1, 0}, {2, 3}));
  Value* i0 = b.scalar(1, DType::kI32);
  keep.push_back(b.dynamic_slice(x, {i0, i0}, {1, 2}));
  keep.push_back(b.dynamic_update_slice(x, b.slice(y, {0, 0}, {1, 2}), {i0, i0}));
  keep.push_back(b.concatenate({x, y, x}, 1));
  keep.push_back(b.pad(x, zero, {1, -1}, {0, 2}, {1, 0}));
  keep.push_back(b.reverse(x, {0, 1}));
  Value* a3 = b.reshape(b.concatenate({x, y, x, y}, 1), {2, 3, 4});
  Value* b3 = b.reshape(b.concatenate({x, y, x, y}, 1), {2, 4, 3});
  keep.push_back(b.dot_general(a3, b3, DotDims{{0}, {0}, {2}, {1}}, {"DEFAULT", "HIGHEST"}));
  keep.push_back(b.dot_general(x, y, DotDims{{}, {}, {1}, {1}}));
  {
    Value* img = b.reshape(b.concatenate({x, y, x, y, x, y, x, y, x, y}, 1), {1, 3, 4, 5});
    Value* ker = b.reshape(b.concatenate({x, y, x}, 1), {2, 3, 3, 1});
    ConvOptions o;
    o.dims = ConvOptions::nchw(2);
    o.window_strides = {2, 1};
    o.padding = {{1, 1}, {0, 2}};
    o.lhs_dilation = {1, 2};
    o.rhs_dilation = {1, 1};
    o.window_reversal = {false, true};
    keep.push_back(b.convolution(img, ker, o));
    ConvOptions plain;
    plain.dims = ConvOptions::nchw(2);
    keep.push_back(b.convolution(img, ker, plain));
  }
  keep.push_back(b.reduce(x, zero, {1}, OpKind::kAdd));
  {
    Value* izero = b.scalar(0, DType::kI32);
    auto rs = b.reduce({x, k}, {zero, izero}, {0}, [](Builder& rb, const std::vector<Value*>& a) {
      Value* ge = rb.compare(a[0], a[2], "GE");
      return std::vector<Value*>{rb.select(ge, a[0], a[2]), rb.select(ge, a[1], a[3])};
    });
    keep.insert(keep.end(), rs.begin(), rs.end());
    // A body that subtracts is not commutative: printed with the reducer(...) block.
    keep.push_back(b.reduce({x}, {zero}, {0, 1}, [](Builder& rb, const std::vector<Value*>& a) {
      return std::vector<Value*>{rb.subtract(a[0], a[1])};
    })[0]);
  }
  {
    WindowOptions w;
    w.window_dimensions = {1, 2};
    w.window_strides = {1, 1};
    w.padding = {{0, 0}, {0, 1}};
    keep.push_back(b.reduce_window(x, zero, w, OpKind::kMaximum));
    Value* op4 = b.concatenate({x, b.slice(y, {0, 0}, {2, 1})}, 1);  // 2x4
    WindowOptions s;
    s.window_dimensions = {1, 2};
    s.window_strides = {1, 2};
    Value* src = b.slice(x, {0, 0}, {2, 2});
    keep.push_back(b.select_and_scatter(
        op4, src, zero, s,
        [](Builder& rb, const std::vector<Value*>& a) { return std::vector<Value*>{rb.compare(a[0], a[1], "GE")}; },
        [](Builder& rb, const std::vector<Value*>& a) { return std::vector<Value*>{rb.add(a[0], a[1])}; }));
  }
  keep.push_back(b.map({x, y}, {0, 1}, [](Builder& rb, const std::vector<Value*>& a) {
    return std::vector<Value*>{rb.multiply(a[0], a[1])};
  })[0]);
  {
    Value* idx = b.constant(Tensor::from<int>(DType::kI32, {2, 1}, {1, 0}));
    keep.push_back(b.gather(x, idx, GatherDims{{1}, {0}, {}, {}, {0}, 1}, {1, 3}, true));
    Value* upd = b.slice(y, {0, 0}, {2, 3});
    keep.push_back(b.scatter({x}, idx, {upd}, ScatterDims{{1}, {0}, {}, {}, {0}, 1},
                             [](Builder& rb, const std::vector<Value*>& a) {
                               return std::vector<Value*>{rb.add(a[0], a[1])};
                             },
                             false, true)[0]);
  }
  {
    auto s = b.sort({x, k}, 1, true, [](Builder& rb, const std::vector<Value*>& a) {
      return std::vector<Value*>{rb.compare(a[0], a[1], "GT", "TOTALORDER")};
    });
    keep.insert(keep.end(), s.begin(), s.end());
  }
  {
    Value* n0 = b.scalar(0, DType::kI32);
    auto w = b.while_(
        {n0, x},
        [](Builder& rb, const std::vector<Value*>& a) {
          return std::vector<Value*>{rb.compare(a[0], rb.scalar(3, DType::kI32), "LT")};
        },
        [](Builder& rb, const std::vector<Value*>& a) {
          return std::vector<Value*>{rb.add(a[0], rb.scalar(1, DType::kI32)), rb.exponential(a[1])};
        });
    keep.insert(keep.end(), w.begin(), w.end());
    Value* pr = b.compare(n0, i0, "LT");
    keep.push_back(b.if_(
        pr, [&](Builder& rb, const std::vector<Value*>&) { return std::vector<Value*>{rb.negate(x)}; },
        [&](Builder&, const std::vector<Value*>&) { return std::vector<Value*>{y}; })[0]);
    keep.push_back(b.case_(i0, {[&](Builder&, const std::vector<Value*>&) { return std::vector<Value*>{x}; },
                                [&](Builder& rb, const std::vector<Value*>&) {
                                  return std::vector<Value*>{rb.abs(y)};
                                }})[0]);
  }
  Value* t = b.tuple({x, k});
  keep.push_back(b.get_tuple_element(t, 1));
  auto ob = b.optimization_barrier({x, y});
  keep.insert(keep.end(), ob.begin(), ob.end());
  keep.push_back(b.call(*h, {x})[0]);
  Value* state = b.constant(Tensor::from<uint64_t>(DType::kUI64, {2}, {1, 2}));
  auto [ns, bits] = b.rng_bit_generator(state, Type::tensor(DType::kUI32, {2, 2}), "THREE_FRY");
  keep.push_back(ns);
  keep.push_back(bits);
  keep.push_back(b.all_reduce({x}, {{0, 1}}, OpKind::kAdd)[0]);
  keep.push_back(b.all_reduce({x, y}, {}, OpKind::kMaximum)[1]);
  b.func_return({keep[10], keep.back(), x});
  return m;
}

}  // namespace netspec::hlo::testing
