// A random program for differential tests of the executors: each seed builds a small @main of
// elementwise chains, broadcasts of reductions, softmax rows, transposes, slices and
// concatenates, reshape views, products (attention's strided per-head ones among them), dynamic
// slices, row gathers and scatter-adds at out-of-range indices too, bf16 products, calls, if,
// and while loops that carry values computed from themselves and stack them with
// dynamic_update_slice: the forms the cpu planner rewrites (fused groups, in-place loop carries
// and initial values, unfilled stacks, inlined calls, buffer reuse). Values stay O(1) (bounded
// unary ops, means rather than sums) and nothing branches on a value rounding could move, so
// engines agree to rounding. Used by tests/exec/cpu_random_programs_test.cpp (cpu against ref),
// tests/oracles/gen_cases_random.cpp (ref against XLA) and tests/jax/random_cases.cpp (the JAX
// translator against ref).
#pragma once
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/tensor.h"
#include "hlo/builder.h"
#include "hlo/ir.h"

namespace netspec::testing {

namespace random_program_detail {
using hlo::Builder;
using hlo::DotDims;
using hlo::Func;
using hlo::I64s;
using hlo::Module;
using hlo::OpKind;
using hlo::Type;
using hlo::Value;

// One random program; every choice comes from the seed.
class RandomProgram {
 public:
  // `differentiable`: gathers and scatters at in-range indices only (gather's VJP assumes them:
  // docs/autodiff.md), for autodiff::gradcheck. (The loops are all counted ones, which autodiff
  // differentiates.)
  RandomProgram(uint32_t seed, DType dt, bool differentiable = false)
      : rng_(seed), dt_(dt), differentiable_(differentiable) {
    const std::vector<Shape> shapes = {{16, 33},      {4, 8, 16},     {2, 3, 64}, {1, 512},
                                       {37},          {8, 1, 7},      {64, 64},   {3, 5, 40},
                                       {2, 8, 2, 16}, {4, 16, 4, 32}, {8, 32, 64}};
    shape_ = shapes[pick(shapes.size())];
    nargs_ = 1 + static_cast<int>(pick(3));
  }

  // Adds @pair to m and builds main's body (its arguments added here; main has none before).
  void build(Module& m, Func* f) {
    // @pair(a, b) -> (a * b + a, tanh(b)): a callee for func.call (the planner inlines it).
    const Type t = Type::tensor(dt_, shape_);
    Func* callee = m.add_func("pair", {t, t});
    {
      Builder cb(callee->body.get());
      Value* a = callee->arg(0);
      Value* bb = callee->arg(1);
      cb.func_return({cb.add(cb.multiply(a, bb), a), cb.tanh(bb)});
    }
    Builder b(f->body.get());
    for (int i = 0; i < nargs_; ++i) pool_.push_back(f->body->add_arg(t));
    // A cheap value of the arguments read first and again at the end: the planner recomputes
    // it there from the arguments when it is large (hlo/remat.cpp: 64 KiB and more).
    Value* early = b.add(pool_[0], b.multiply(pool_.back(), splat(b, 0.5, shape_)));
    Value* first = b.tanh(early);
    const int nops = 4 + static_cast<int>(pick(10));
    for (int i = 0; i < nops; ++i) step(b, *callee);
    // Results: 1-4 values, any shape; sometimes an argument itself or one value twice.
    std::vector<Value*> outs = {b.multiply(first, early)};
    const int nout = 1 + static_cast<int>(pick(4));
    for (int i = 0; i < nout; ++i)
      outs.push_back(pick(4) == 0 ? pool_[pick(pool_.size())] : recent());
    b.func_return(outs);
  }

  // Inputs uniform in [-2, 2) (f32 values also for f64, with a tail below f32's precision).
  std::vector<Tensor> inputs(uint32_t seed) const {
    std::vector<Tensor> in;
    for (int i = 0; i < nargs_; ++i) {
      std::mt19937 g(seed + static_cast<uint32_t>(i));
      std::uniform_real_distribution<double> u(-2, 2);
      std::vector<double> v(static_cast<size_t>(num_elements(shape_)));
      for (size_t j = 0; j < v.size(); ++j) {
        v[j] = static_cast<float>(u(g));
        if (dt_ == DType::kF64) v[j] *= 1 + 1e-9 * static_cast<double>(j);
      }
      in.push_back(Tensor::from<double>(dt_, shape_, v));
    }
    return in;
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  // Mostly one of the last few values (longer chains), sometimes any.
  Value* recent() {
    const size_t n = pool_.size();
    return pick(3) == 0 ? pool_[pick(n)] : pool_[n - 1 - pick(std::min<size_t>(n, 3))];
  }
  // A value of the program's shape (one exists: the arguments).
  Value* full() {
    for (int tries = 0; tries < 8; ++tries) {
      Value* v = recent();
      if (v->type.shape() == shape_) return v;
    }
    std::vector<Value*> c;
    for (Value* v : pool_)
      if (v->type.shape() == shape_) c.push_back(v);
    return c[pick(c.size())];
  }
  Value* scalar(Builder& b, double v) { return b.scalar(v, dt_); }
  Value* splat(Builder& b, double v, const Shape& s) {
    return b.broadcast_in_dim(scalar(b, v), s, {});
  }
  Value* i32(Builder& b, int64_t v) { return b.scalar(static_cast<double>(v), DType::kI32); }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }

  // A bounded unary chain element: values stay within a few units so sums stay well scaled.
  Value* unary(Builder& b, Value* x) {
    switch (pick(8)) {
      case 0:
        return b.tanh(x);
      case 1:
        return b.logistic(x);
      case 2:
        return b.negate(x);
      case 3:
        return b.exponential(b.tanh(x));
      case 4:
        return b.sqrt(b.add(b.abs(x), splat(b, 1, x->type.shape())));
      case 5:
        return b.log(b.add(b.abs(x), splat(b, 1, x->type.shape())));
      case 6:
        return b.sine(b.tanh(x));  // (sine of a large value would amplify its rounding)
      default:
        return b.erf(x);
    }
  }
  Value* binary(Builder& b, Value* x, Value* y) {
    switch (pick(6)) {
      case 0:
        return b.add(x, y);
      case 1:
        return b.subtract(x, y);
      case 2:
        return b.multiply(b.tanh(x), y);
      case 3:
        return b.maximum(x, y);
      case 4:
        return b.minimum(x, y);
      default:
        return b.divide(x, b.add(b.abs(y), splat(b, 1, y->type.shape())));
    }
  }
  // The mean (or max) over one dim, broadcast back and combined with the full value.
  Value* reduce_back(Builder& b, Value* x) {
    const int64_t d = static_cast<int64_t>(pick(static_cast<size_t>(rank())));
    const bool mean = pick(2) == 0;
    Value* r =
        b.reduce(x, scalar(b, mean ? 0.0 : -1e30), {d}, mean ? OpKind::kAdd : OpKind::kMaximum);
    if (mean)
      r = b.multiply(
          r, splat(b, 1.0 / static_cast<double>(shape_[static_cast<size_t>(d)]), r->type.shape()));
    pool_.push_back(r);
    I64s keep;
    for (int64_t i = 0; i < rank(); ++i)
      if (i != d) keep.push_back(i);
    return b.subtract(x, b.broadcast_in_dim(r, shape_, keep));
  }
  // Slices along one dim swapped by a concatenate (the same shape back).
  Value* rotate(Builder& b, Value* x) {
    I64s dims;
    for (int64_t i = 0; i < rank(); ++i)
      if (shape_[static_cast<size_t>(i)] > 1) dims.push_back(i);
    if (dims.empty()) return b.negate(x);
    const int64_t d = dims[pick(dims.size())], n = shape_[static_cast<size_t>(d)];
    const int64_t cut = 1 + static_cast<int64_t>(pick(static_cast<size_t>(n - 1)));
    I64s lo(shape_.size(), 0), mid = lo, hi(shape_.begin(), shape_.end());
    mid[static_cast<size_t>(d)] = cut;
    I64s cut_hi = hi;
    cut_hi[static_cast<size_t>(d)] = cut;
    return b.concatenate({b.slice(x, mid, hi), b.slice(x, lo, cut_hi)}, d);
  }
  // A transpose that stays in the pool, and its inverse combined with x.
  Value* transpose_back(Builder& b, Value* x) {
    I64s perm(shape_.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::shuffle(perm.begin(), perm.end(), rng_);
    Value* t = b.tanh(b.transpose(x, perm));
    pool_.push_back(t);
    I64s inv(perm.size());
    for (size_t i = 0; i < perm.size(); ++i)
      inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    return b.add(b.transpose(t, inv), x);
  }
  // Attention over [B, T, H, D] as vit writes it: s = q·kᵀ per (batch, head) read in place,
  // softmax rows, p·v, and the head merge back to [B, T, H, D] (a transpose the product writes).
  Value* attention(Builder& b, Value* q, Value* k) {
    DotDims qk;
    qk.lhs_batching = {0, 2}, qk.rhs_batching = {0, 2};
    qk.lhs_contracting = {3}, qk.rhs_contracting = {3};
    Value* sc = b.dot_general(q, k, qk);  // [B, H, T, T]
    const Shape ss = sc->type.shape();
    sc = b.multiply(sc, splat(b, 1.0 / static_cast<double>(shape_[3]), ss));
    Value* m = b.reduce(sc, scalar(b, -1e30), {3}, OpKind::kMaximum);
    Value* e = b.exponential(b.subtract(sc, b.broadcast_in_dim(m, ss, {0, 1, 2})));
    Value* z = b.reduce(e, scalar(b, 0), {3}, OpKind::kAdd);
    Value* p = b.divide(e, b.broadcast_in_dim(z, ss, {0, 1, 2}));
    pool_.push_back(p);
    DotDims pv;
    pv.lhs_batching = {0, 1}, pv.rhs_batching = {0, 2};
    pv.lhs_contracting = {3}, pv.rhs_contracting = {1};
    Value* o = b.dot_general(p, k, pv);  // [B, H, T, D]
    return b.add(b.transpose(o, {0, 2, 1, 3}), q);
  }
  // x · yᵀ over the last dim (batched over the leading ones), scaled by 1/K, kept in the pool;
  // then tanh of it times x, scaled by 1/M (rank 4: attention half the time).
  Value* product(Builder& b, Value* x, Value* y) {
    const int64_t r = rank(), k = shape_.back();
    if (r == 4 && pick(2) == 0) return attention(b, x, y);
    DotDims dd;
    for (int64_t i = 0; i + 2 < r; ++i) dd.lhs_batching.push_back(i), dd.rhs_batching.push_back(i);
    dd.lhs_contracting = {r - 1}, dd.rhs_contracting = {r - 1};
    if (r == 1) {
      Value* s = b.dot_general(x, y, dd);  // a scalar
      return b.multiply(x, b.broadcast_in_dim(b.tanh(s), shape_, {}));
    }
    Value* p = b.dot_general(x, y, dd);  // [..., M, M]
    p = b.multiply(p, splat(b, 1.0 / static_cast<double>(k), p->type.shape()));
    pool_.push_back(p);
    // p · x: [..., M, M] x [..., M, K] -> [..., M, K]
    DotDims d2;
    for (int64_t i = 0; i + 2 < r; ++i) d2.lhs_batching.push_back(i), d2.rhs_batching.push_back(i);
    d2.lhs_contracting = {r - 1}, d2.rhs_contracting = {r - 2};
    Value* q = b.dot_general(b.tanh(p), x, d2);
    return b.multiply(
        q, splat(b, 1.0 / static_cast<double>(shape_[static_cast<size_t>(r - 2)]), shape_));
  }
  // A window of x at a clamped start (past the end on purpose half the time), written back into
  // y at another clamped start.
  Value* window(Builder& b, Value* x, Value* y) {
    Shape sz = shape_;
    std::vector<Value*> at, to;
    for (size_t i = 0; i < sz.size(); ++i) {
      sz[i] = std::max<int64_t>(1, shape_[i] / 2);
      at.push_back(i32(b, static_cast<int64_t>(pick(static_cast<size_t>(shape_[i]) * 2))));
      to.push_back(i32(b, static_cast<int64_t>(pick(static_cast<size_t>(shape_[i]) + 1)) - 1));
    }
    Value* w = b.dynamic_slice(x, at, sz);
    return b.dynamic_update_slice(y, b.tanh(w), to);
  }
  // The zero stack of shape `ss`: one made by an earlier loop half the time (a splat with two
  // readers: a loop must neither start on it in place nor leave it unfilled for the other),
  // sometimes also read before the loop or kept as a result.
  Value* zero_stack(Builder& b, const Shape& ss) {
    for (Value* z : zeros_)
      if (z->type.shape() == ss && pick(2) == 0) return z;
    Value* z = splat(b, 0.0, ss);
    zeros_.push_back(z);
    if (pick(4) == 0) pool_.push_back(z);
    return z;
  }
  // while i < n: x = f(x, c) pointwise (written in place when x dies), optionally the
  // state stacked by dynamic_update_slice (read back at i - 1 in some programs, so it must be
  // filled first), optionally a second pair of carries swapped each turn (scaled, or exactly:
  // each slot's new value is the other's old one), optionally an if in the body that reads the
  // carry before its update. The initial x is sometimes read again after the loop. Returns x;
  // pushes the rest.
  Value* loop(Builder& b, Value* x0, Value* c) {
    const int64_t n = static_cast<int64_t>(pick(4));  // 0..3 turns
    const bool stack = pick(2) == 0, read_back = pick(2) == 0, swap = pick(3) == 0;
    const bool exact_swap = pick(2) == 0, branch_in_body = pick(4) == 0;
    const bool reuse_init = pick(4) == 0;
    Shape ss = shape_;
    ss.insert(ss.begin(), std::max<int64_t>(n, 1));
    std::vector<Value*> init = {i32(b, 0), x0};
    if (stack) {
      Value* z = zero_stack(b, ss);
      if (pick(3) == 0) {  // x0 + z[0] (zero): a reader of the stack before the loop
        I64s lo(ss.size(), 0), hi(ss.begin(), ss.end());
        hi[0] = 1;
        init[1] = b.add(x0, b.reshape(b.slice(z, lo, hi), shape_));
      }
      init.push_back(z);
    }
    if (swap) init.push_back(b.negate(x0)), init.push_back(c);
    const size_t si = 2, wi = stack ? 3 : 2;
    const DType dt = dt_;
    const Shape shape = shape_;
    const bool pred_true = pick(2) == 0;
    auto out = b.while_(
        init,
        [n](Builder& cb, const std::vector<Value*>& s) {
          return std::vector<Value*>{
              cb.compare(s[0], cb.scalar(static_cast<double>(n), DType::kI32), "LT")};
        },
        [=](Builder& cb, const std::vector<Value*>& s) {
          std::vector<Value*> next = s;
          Value* half = cb.broadcast_in_dim(cb.scalar(0.5, dt), shape, {});
          Value* x = cb.add(cb.multiply(s[1], half), cb.tanh(c));
          if (branch_in_body) {  // x += (p ? tanh(s[1]) : s[1]), the carry read in a region
            Value* p = cb.compare(cb.scalar(pred_true ? 1 : 0, DType::kI32),
                                  cb.scalar(0, DType::kI32), "NE");
            Value* carry = s[1];
            auto r = cb.if_(
                p,
                [&](Builder& rb, const std::vector<Value*>&) {
                  return std::vector<Value*>{rb.tanh(carry)};
                },
                [&](Builder&, const std::vector<Value*>&) { return std::vector<Value*>{carry}; });
            x = cb.add(x, cb.multiply(r[0], half));
          }
          if (stack) {
            I64s zeros(shape.size() + 1, 0);
            std::vector<Value*> at = {s[0]};
            for (size_t i = 0; i < shape.size(); ++i) at.push_back(cb.scalar(0, DType::kI32));
            if (read_back) {  // x += stack[i - 1] (clamped to 0 on the first turn)
              Shape one = shape;
              one.insert(one.begin(), 1);
              std::vector<Value*> prev = at;
              prev[0] = cb.subtract(s[0], cb.scalar(1, DType::kI32));
              x = cb.add(x, cb.reshape(cb.dynamic_slice(s[si], prev, one), shape));
            }
            Shape one = shape;
            one.insert(one.begin(), 1);
            next[si] = cb.dynamic_update_slice(s[si], cb.reshape(x, one), at);
          }
          if (swap)
            next[wi] = s[wi + 1], next[wi + 1] = exact_swap ? s[wi] : cb.multiply(s[wi], half);
          next[1] = x;
          next[0] = cb.add(s[0], cb.scalar(1, DType::kI32));
          return next;
        });
    for (size_t i = 2; i < out.size(); ++i) pool_.push_back(out[i]);
    if (reuse_init) return b.add(out[1], b.multiply(x0, splat(b, 0.25, shape_)));
    return out[1];
  }

  // Softmax over the last dim (the row folds of a fused group: max, exp, sum).
  Value* softmax(Builder& b, Value* x) {
    const int64_t last = rank() - 1;
    I64s keep;
    for (int64_t i = 0; i < last; ++i) keep.push_back(i);
    Value* m = b.reduce(x, scalar(b, -1e30), {last}, OpKind::kMaximum);
    Value* e = b.exponential(b.subtract(x, b.broadcast_in_dim(m, shape_, keep)));
    Value* z = b.reduce(e, scalar(b, 0), {last}, OpKind::kAdd);
    return b.divide(e, b.broadcast_in_dim(z, shape_, keep));
  }
  // select / clamp / compare between two values.
  Value* choose(Builder& b, Value* x, Value* y) {
    // (Continuous where the comparison flips: rounding may move a value across it.)
    if (pick(2) == 0)  // leaky ReLU of x, times y
      return b.multiply(y, b.select(b.compare(x, splat(b, 0, shape_), "GT"), x,
                                    b.multiply(x, splat(b, 0.1, shape_))));
    return b.clamp(splat(b, -0.5, shape_), x, b.maximum(y, splat(b, -0.5, shape_)));
  }
  // A reshape to other dims (a view), worked on, and back.
  Value* reshape_back(Builder& b, Value* x) {
    int64_t n = 1;
    for (int64_t d : shape_) n *= d;
    Shape other = n % 4 == 0 ? Shape{4, n / 4} : Shape{n};
    Value* r = b.reshape(x, other);
    Value* t = b.multiply(r, b.logistic(r));
    pool_.push_back(r);
    return b.add(b.reshape(t, shape_), x);
  }
  // if (p) { x * y, tanh(x) } else { y - x, x }, p computed from constants (a predicate from
  // the data could flip with rounding).
  Value* branch(Builder& b, Value* x, Value* y) {
    Value* pred = b.compare(i32(b, static_cast<int64_t>(pick(2))), i32(b, 0), "EQ");
    auto r = b.if_(
        pred,
        [&](Builder& cb, const std::vector<Value*>&) {
          return std::vector<Value*>{cb.multiply(x, y), cb.tanh(x)};
        },
        [&](Builder& cb, const std::vector<Value*>&) {
          return std::vector<Value*>{cb.subtract(y, x), x};
        });
    pool_.push_back(r[1]);
    return r[0];
  }
  // A while whose body runs another while over the outer carry, reading a value from two scopes
  // out, and keeps a slice of its carry (a view) read after the carry's update.
  Value* nested(Builder& b, Value* x0, Value* c) {
    const int64_t n = 1 + static_cast<int64_t>(pick(3)), m = static_cast<int64_t>(pick(3));
    const DType dt = dt_;
    const Shape shape = shape_;
    auto out = b.while_(
        {i32(b, 0), x0},
        [n](Builder& cb, const std::vector<Value*>& st) {
          return std::vector<Value*>{
              cb.compare(st[0], cb.scalar(static_cast<double>(n), DType::kI32), "LT")};
        },
        [=](Builder& cb, const std::vector<Value*>& st) {
          Value* outer = st[1];
          auto in = cb.while_(
              {cb.scalar(0, DType::kI32), cb.tanh(outer)},
              [m](Builder& db, const std::vector<Value*>& t) {
                return std::vector<Value*>{
                    db.compare(t[0], db.scalar(static_cast<double>(m), DType::kI32), "LT")};
              },
              [=](Builder& db, const std::vector<Value*>& t) {
                Value* half = db.broadcast_in_dim(db.scalar(0.5, dt), shape, {});
                return std::vector<Value*>{db.add(t[0], db.scalar(1, DType::kI32)),
                                           db.add(db.multiply(t[1], half), db.multiply(c, outer))};
              });
          I64s lo(shape.size(), 0), hi(shape.begin(), shape.end());
          hi[0] = std::max<int64_t>(1, shape[0] / 2);
          Value* head = cb.slice(outer, lo, hi);  // a view of the dying carry
          Value* next = cb.add(outer, in[1]);
          Shape hs(hi.begin(), hi.end());
          Value* head2 = cb.add(cb.slice(next, lo, hi), head);
          Value* padded = cb.pad(head2, cb.scalar(0, dt), I64s(shape.size(), 0), [&] {
            I64s h(shape.size(), 0);
            h[0] = shape[0] - hs[0];
            return h;
          }());
          return std::vector<Value*>{cb.add(st[0], cb.scalar(1, DType::kI32)),
                                     cb.multiply(cb.tanh(next), cb.logistic(padded))};
        });
    return out[1];
  }
  // x · yᵀ for rank 2 written transposed (the transpose folds into the product).
  Value* product_t(Builder& b, Value* x, Value* y) {
    if (rank() != 2) return b.multiply(x, y);
    DotDims dd;
    dd.lhs_contracting = {0}, dd.rhs_contracting = {0};
    Value* p = b.dot_general(x, y, dd);  // [N, N]
    Value* t = b.transpose(p, {1, 0});
    pool_.push_back(b.multiply(t, splat(b, 1.0 / static_cast<double>(shape_[0]), t->type.shape())));
    return b.add(x, y);
  }

  // x and y transposed (leading dims swapped, the last dim kept last) and then multiplied over
  // the last dim: the transposes fold into the product's dims (hlo/dot_fold.cpp), which reads x
  // and y through strides (vit's head split). The [..., M, M] result scaled by 1/K.
  Value* product_of_transposes(Builder& b, Value* x, Value* y) {
    const int64_t r = rank();
    if (r < 3) return b.subtract(x, y);
    I64s perm(static_cast<size_t>(r));
    for (int64_t i = 0; i < r; ++i) perm[static_cast<size_t>(i)] = i;
    std::swap(perm[0], perm[static_cast<size_t>(pick(static_cast<size_t>(r - 1)))]);
    Value* xt = b.transpose(x, perm);
    Value* yt = b.transpose(pick(2) == 0 ? y : x, perm);
    DotDims dd;
    for (int64_t i = 0; i + 2 < r; ++i) dd.lhs_batching.push_back(i), dd.rhs_batching.push_back(i);
    dd.lhs_contracting = {r - 1}, dd.rhs_contracting = {r - 1};
    Value* p = b.dot_general(xt, yt, dd);
    return b.multiply(p, splat(b, 1.0 / static_cast<double>(shape_.back()), p->type.shape()));
  }
  // A value read only by slices that cover it, concatenated back in another order: the slices
  // sink into the producer (hlo/slice_sink.cpp): a product x·yᵀ, that product plus a broadcast
  // bias (attention's q/k/v projection), or a broadcast.
  Value* sliced(Builder& b, Value* x, Value* y) {
    Value* w = nullptr;
    const int64_t r = rank();
    if (r >= 2 && pick(3) != 0) {
      DotDims dd;
      for (int64_t i = 0; i + 2 < r; ++i)
        dd.lhs_batching.push_back(i), dd.rhs_batching.push_back(i);
      dd.lhs_contracting = {r - 1}, dd.rhs_contracting = {r - 1};
      w = b.dot_general(x, y, dd);  // [..., M, M], sums of K terms: scaled after the concat
      if (pick(2) == 0) {           // + the sum of x over all but dim r - 2, along the last dim
        I64s all;
        for (int64_t i = 0; i < r; ++i)
          if (i != r - 2) all.push_back(i);
        Value* bias = b.reduce(x, scalar(b, 0), all, OpKind::kAdd);  // |.| < 2·numel / M
        bias = b.multiply(
            bias, splat(b,
                        static_cast<double>(shape_[static_cast<size_t>(r - 2)] * shape_.back()) /
                            static_cast<double>(num_elements(shape_)),
                        bias->type.shape()));
        w = b.add(w, b.broadcast_in_dim(bias, w->type.shape(), {r - 1}));
      }
    } else {  // the mean over the last dim, broadcast back
      I64s keep;
      for (int64_t i = 0; i + 1 < r; ++i) keep.push_back(i);
      Value* m = b.reduce(x, scalar(b, 0), {r - 1}, OpKind::kAdd);
      w = b.broadcast_in_dim(m, shape_, keep);  // |.| < 2K: scaled after the concat too
    }
    const Shape ws = w->type.shape();
    I64s dims;
    for (size_t i = 0; i < ws.size(); ++i)
      if (ws[i] > 1) dims.push_back(static_cast<int64_t>(i));
    if (dims.empty()) return b.tanh(w);
    const int64_t d = dims[pick(dims.size())], n = ws[static_cast<size_t>(d)];
    const int64_t cut = 1 + static_cast<int64_t>(pick(static_cast<size_t>(n - 1)));
    I64s lo(ws.size(), 0), mid = lo, hi(ws.begin(), ws.end()), cut_hi = hi;
    mid[static_cast<size_t>(d)] = cut, cut_hi[static_cast<size_t>(d)] = cut;
    Value* v = b.concatenate({b.slice(w, mid, hi), b.slice(w, lo, cut_hi)}, d);
    return b.multiply(v, splat(b, 1.0 / static_cast<double>(shape_.back()), ws));
  }

  // For [R, C]: rows gathered at constant indices (an embedding lookup; out-of-range indices,
  // negative ones too, clamp to the nearest row), then scatter-added back at the same indices
  // scaled by 0.5 (its VJP; out-of-range updates are dropped, repeated rows sum).
  Value* embed(Builder& b, Value* x) {
    if (rank() != 2) return b.tanh(x);
    const int64_t rows = shape_[0], k = 5;
    std::vector<int64_t> idx;
    for (int64_t i = 0; i < k; ++i)
      idx.push_back(differentiable_
                        ? static_cast<int64_t>(pick(static_cast<size_t>(rows)))
                        : static_cast<int64_t>(pick(static_cast<size_t>(rows + 4))) - 2);
    Value* at = b.constant(Tensor::from<int64_t>(DType::kI32, {k, 1}, idx));
    hlo::GatherDims g;
    g.offset_dims = {1}, g.collapsed_slice_dims = {0}, g.start_index_map = {0},
    g.index_vector_dim = 1;
    Value* got = b.gather(x, at, g, {1, shape_[1]});  // [k, C]
    pool_.push_back(got);
    hlo::ScatterDims sd;
    sd.update_window_dims = {1}, sd.inserted_window_dims = {0},
    sd.scatter_dims_to_operand_dims = {0};
    sd.index_vector_dim = 1;
    Value* upd = b.multiply(got, splat(b, 0.5, got->type.shape()));
    return b.scatter({x}, at, {upd}, sd, [](Builder& r, const std::vector<Value*>& a) {
      return std::vector<Value*>{r.add(a[0], a[1])};
    })[0];
  }

  // Mixed precision (f32 programs): two arguments rounded to bf16 and their product with bf16
  // operands and an f32 result (rank >= 2), and the first's rounding back in f32 (bf16 has no
  // arithmetic of its own in netspec's executors: docs/design.md). Arguments, not computed
  // values: one f32 rounding apart can be a whole bf16 step apart after the conversion.
  Value* bf16(Builder& b, Value* other) {
    if (dt_ != DType::kF32) return b.tanh(other);
    Value* x = pool_[pick(static_cast<size_t>(nargs_))];
    Value* y = pool_[pick(static_cast<size_t>(nargs_))];
    Value* xb = b.convert(x, DType::kBF16);
    Value* yb = b.convert(y, DType::kBF16);
    if (rank() >= 2) {
      DotDims dd;
      for (int64_t i = 0; i + 2 < rank(); ++i)
        dd.lhs_batching.push_back(i), dd.rhs_batching.push_back(i);
      dd.lhs_contracting = {rank() - 1}, dd.rhs_contracting = {rank() - 1};
      Value* p = b.dot_general(xb, yb, dd, {}, DType::kF32);
      pool_.push_back(
          b.multiply(p, splat(b, 1.0 / static_cast<double>(shape_.back()), p->type.shape())));
    }
    return b.convert(xb, DType::kF32);
  }

  void step(Builder& b, const Func& callee) {
    Value* x = full();
    Value* v = nullptr;
    switch (pick(21)) {
      case 19:
        v = product_of_transposes(b, x, full());
        break;
      case 20:
        v = sliced(b, x, full());
        break;
      case 17:
        v = embed(b, x);
        break;
      case 18:
        v = bf16(b, x);
        break;
      case 11:
        v = softmax(b, x);
        break;
      case 12:
        v = choose(b, x, full());
        break;
      case 13:
        v = reshape_back(b, x);
        break;
      case 14:
        v = branch(b, x, full());
        break;
      case 15:
        v = nested(b, x, full());
        break;
      case 16:
        v = product_t(b, x, full());
        break;
      case 0:
      case 1:
        v = unary(b, x);
        break;
      case 2:
      case 3:
        v = binary(b, x, full());
        break;
      case 4:
        v = reduce_back(b, x);
        break;
      case 5:
        v = rotate(b, x);
        break;
      case 6:
        v = transpose_back(b, x);
        break;
      case 7:
        v = product(b, x, full());
        break;
      case 8:
        v = window(b, x, full());
        break;
      case 9: {
        auto r = b.call(callee, {x, full()});
        pool_.push_back(r[1]);
        v = r[0];
        break;
      }
      default:
        v = loop(b, x, full());
        break;
    }
    pool_.push_back(v);
  }

  std::mt19937 rng_;
  DType dt_;
  bool differentiable_;
  Shape shape_;
  int nargs_ = 1;
  std::vector<Value*> pool_;
  std::vector<Value*> zeros_;  // zero stacks made so far (zero_stack)
};

}  // namespace random_program_detail
using random_program_detail::RandomProgram;

}  // namespace netspec::testing
