// Fast elementwise kernels: the element type is dispatched once at plan time, then a tight loop
// (one functor, no per-element switch) runs on the thread pool. The per-element math is the ref
// kernels' own (exec/scalar_ops.h, inlined), so both executors agree bit for bit, except f32 exp,
// log, tanh and logistic: vector kernels (vmath.h) within 2 ulp of it. TOTALORDER and
// reinterpreting compares and the narrow integer types stay on the ref kernels.
#include <cmath>
#include <type_traits>

#include "core/bf16.h"
#include "core/thread_pool.h"
#include "exec/cpu/kernels.h"
#include "exec/cpu/kernels/vmath.h"
#include "exec/scalar_ops.h"
#include "hlo/op_family.h"

namespace netspec::exec::cpu {
namespace {

using hlo::OpKind;

template <typename T, typename R, typename F>
Compiled make_unary(F f, int64_t grain) {
  Compiled c;
  c.pointwise = sizeof(T) == sizeof(R);
  c.run = [f, grain](const RunArgs& a) {
    const T* x = a.in[0]->data<T>();
    R* o = a.out[0]->data<R>();
    parallel_for(a.out[0]->numel(), grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = f(x[i]);
    });
  };
  return c;
}

// f32 exp, log, tanh, logistic: the vector kernels of vmath.h (within 2 ulp of scalar_ops.h).
Compiled make_vec_unary(VecUnaryFn v) {
  Compiled c;
  c.pointwise = true;
  c.run = [v](const RunArgs& a) {
    const float* x = a.in[0]->data<float>();
    float* o = a.out[0]->data<float>();
    parallel_for(a.out[0]->numel(), kGrainCheap,
                 [&](int64_t b, int64_t e) { v(o + b, x + b, e - b); });
  };
  return c;
}

template <typename T, typename R, typename F>
Compiled make_binary(F f, int64_t grain) {
  Compiled c;
  c.pointwise = sizeof(T) == sizeof(R);
  c.run = [f, grain](const RunArgs& a) {
    const T* x = a.in[0]->data<T>();
    const T* y = a.in[1]->data<T>();
    R* o = a.out[0]->data<R>();
    parallel_for(a.out[0]->numel(), grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = f(x[i], y[i]);
    });
  };
  return c;
}

// The element types the cpu kernels instantiate; f(T{}) or nullopt for the others.
template <typename F>
std::optional<Compiled> with_fast_dtype(DType t, F&& f) {
  return with_dtype_among<float, double, int32_t, int64_t, uint32_t, uint64_t, uint8_t, bool>(
      t, std::forward<F>(f));
}

// Transcendental ops get small parallel_for chunks, the rest large ones.
constexpr int64_t grain_of(OpKind k) {
  switch (k) {
    case OpKind::kExponential:
    case OpKind::kExponentialMinusOne:
    case OpKind::kLog:
    case OpKind::kLogPlusOne:
    case OpKind::kLogistic:
    case OpKind::kTanh:
    case OpKind::kErf:
    case OpKind::kCbrt:
    case OpKind::kSine:
    case OpKind::kCosine:
    case OpKind::kTan:
    case OpKind::kRemainder:
    case OpKind::kPower:
    case OpKind::kAtan2:
      return kGrainHeavy;
    default:
      return kGrainCheap;
  }
}

// result[i] = Scalar<K>::apply(x[i]) (exec/scalar_ops.h) for the types in K's domain.
template <OpKind K>
std::optional<Compiled> compile_unary(const hlo::Op& op) {
  using S = Scalar<K>;
  const DType rt = op.result(0)->type.dtype();
  return with_fast_dtype(op.operand_type(0).dtype(), [&](auto z) -> std::optional<Compiled> {
    using T = decltype(z);
    if constexpr (in_domain<S::kDomain, T>()) {
      using R = decltype(S::apply(T{}));
      if (rt != (std::is_same_v<R, bool> ? DType::kI1 : op.operand_type(0).dtype()))
        return std::nullopt;
      if constexpr (std::is_same_v<T, float> && std::is_same_v<R, float>)
        if (VecUnaryFn v = vec_unary(K)) return make_vec_unary(v);
      return make_unary<T, R>([](T x) { return S::apply(x); }, grain_of(K));
    } else {
      return std::nullopt;
    }
  });
}

// result[i] = Scalar<K>::apply(x[i], y[i]) for the types in K's domain.
template <OpKind K>
std::optional<Compiled> compile_binary(const hlo::Op& op) {
  using S = Scalar<K>;
  DType t = op.operand_type(0).dtype();
  if (op.operand_type(1).dtype() != t || op.result(0)->type.dtype() != t) return std::nullopt;
  return with_fast_dtype(t, [&](auto z) -> std::optional<Compiled> {
    using T = decltype(z);
    if constexpr (in_domain<S::kDomain, T>())
      return make_binary<T, T>([](T a, T b) { return S::apply(a, b); }, grain_of(K));
    else
      return std::nullopt;
  });
}

// f32 <-> bf16 (core/bf16.h: round to nearest even, NaN kept), vectorised loops.
std::optional<Compiled> compile_convert_bf16(DType from, DType to) {
  Compiled c;
  if (from == DType::kF32 && to == DType::kBF16) {
    c.run = [](const RunArgs& a) {
      const float* x = a.in[0]->data<float>();
      uint16_t* o = a.out[0]->data<uint16_t>();
      parallel_for(a.out[0]->numel(), kGrainCheap,
                   [&](int64_t b, int64_t e) { f32_to_bf16_n(x + b, o + b, e - b); });
    };
    return c;
  }
  if (from == DType::kBF16 && to == DType::kF32) {
    c.run = [](const RunArgs& a) {
      widen_bf16(a.in[0]->data<uint16_t>(), a.out[0]->data<float>(), a.out[0]->numel());
    };
    return c;
  }
  return std::nullopt;  // the other bf16 conversions run on the ref kernel
}

// convert between the fast types (exec/scalar_ops.h's convert_scalar).
std::optional<Compiled> compile_convert(const hlo::Op& op) {
  DType to = op.result(0)->type.dtype();
  if (to == DType::kBF16 || op.operand_type(0).dtype() == DType::kBF16)
    return compile_convert_bf16(op.operand_type(0).dtype(), to);
  return with_fast_dtype(op.operand_type(0).dtype(), [&](auto zf) {
    using From = decltype(zf);
    return with_fast_dtype(to, [&](auto zt) -> std::optional<Compiled> {
      using To = decltype(zt);
      return make_unary<From, To>([](From x) { return convert_scalar<To>(x); }, kGrainCheap);
    });
  });
}

template <typename T>
std::optional<Compiled> compare_typed(CmpDir dir) {
  return with_cmp_dir(dir, [](auto d) {
    return make_binary<T, bool>([](T a, T b) { return compare<decltype(d)::value>(a, b); },
                                kGrainCheap);
  });
}

// compare with the element type's natural compare_type (FLOAT, SIGNED, UNSIGNED).
std::optional<Compiled> compile_compare(const hlo::Op& op) {
  auto* dir_attr = op.attrs.get_if<hlo::EnumAttr>("comparison_direction");
  std::optional<CmpDir> dir = dir_attr ? cmp_dir(dir_attr->value) : std::nullopt;
  if (!dir) return std::nullopt;
  std::string ct;
  if (auto* c = op.attrs.get_if<hlo::EnumAttr>("compare_type")) ct = c->value;
  DType t = op.operand_type(0).dtype();
  if (is_float(t) && !(ct.empty() || ct == "FLOAT")) return std::nullopt;
  if (is_signed_integer(t) && !(ct.empty() || ct == "SIGNED")) return std::nullopt;
  if (is_unsigned_integer(t) && !(ct.empty() || ct == "UNSIGNED")) return std::nullopt;
  switch (t) {
    case DType::kF32:
      return compare_typed<float>(*dir);
    case DType::kF64:
      return compare_typed<double>(*dir);
    case DType::kI32:
      return compare_typed<int32_t>(*dir);
    case DType::kI64:
      return compare_typed<int64_t>(*dir);
    case DType::kUI32:
      return compare_typed<uint32_t>(*dir);
    case DType::kUI64:
      return compare_typed<uint64_t>(*dir);
    default:
      return std::nullopt;
  }
}

// select(pred, a, b): pred is a scalar or has the result's shape.
template <typename T>
Compiled make_select(bool scalar_pred) {
  Compiled c;
  c.run = [scalar_pred](const RunArgs& a) {
    const bool* p = a.in[0]->data<bool>();
    const T* x = a.in[1]->data<T>();
    const T* y = a.in[2]->data<T>();
    T* o = a.out[0]->data<T>();
    if (scalar_pred) {
      const T* src = p[0] ? x : y;
      if (src != o) std::memcpy(o, src, static_cast<size_t>(a.out[0]->numel()) * sizeof(T));
      return;
    }
    parallel_for(a.out[0]->numel(), kGrainCheap, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = p[i] ? x[i] : y[i];
    });
  };
  c.pointwise = true;
  return c;
}

std::optional<Compiled> compile_select(const hlo::Op& op) {
  bool scalar_pred = op.operand_type(0).rank() == 0 && op.result(0)->type.rank() != 0;
  if (op.operand_type(0).dtype() != DType::kI1) return std::nullopt;
  switch (dtype_size(op.result(0)->type.dtype())) {
    case 1:
      return make_select<uint8_t>(scalar_pred);
    case 2:
      return make_select<uint16_t>(scalar_pred);
    case 4:
      return make_select<uint32_t>(scalar_pred);
    case 8:
      return make_select<uint64_t>(scalar_pred);
    default:
      return std::nullopt;
  }
}

// clamp(min, x, max) = minimum(maximum(x, min), max) on f32; min / max may be 0-d.
std::optional<Compiled> compile_clamp(const hlo::Op& op) {
  const hlo::Type& r = op.result(0)->type;
  if (r.dtype() != DType::kF32) return std::nullopt;
  bool scalar[3] = {false, false, false};
  for (size_t i = 0; i < 3; ++i) {
    const hlo::Type& t = op.operand_type(i);
    if (t.dtype() != DType::kF32) return std::nullopt;
    scalar[i] = t.rank() == 0 && r.rank() != 0;
    if (!scalar[i] && t.shape() != r.shape()) return std::nullopt;
  }
  if (scalar[1]) return std::nullopt;
  Compiled c;
  c.pointwise = true;
  const bool sl = scalar[0], sh = scalar[2];
  c.run = [sl, sh](const RunArgs& a) {
    const float* lo = a.in[0]->data<float>();
    const float* x = a.in[1]->data<float>();
    const float* hi = a.in[2]->data<float>();
    float* o = a.out[0]->data<float>();
    parallel_for(a.out[0]->numel(), kGrainCheap, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        o[i] = Scalar<OpKind::kClamp>::apply(lo[sl ? 0 : i], x[i], hi[sh ? 0 : i]);
    });
  };
  return c;
}

}  // namespace

void register_elementwise(Compiler* t) {
  hlo::FamilyTable<Compiler> ft(t, "elementwise.cpp", {"unary", "binary"});
#define SET_UNARY(KIND) ft.set(OpKind::KIND, compile_unary<OpKind::KIND>);
  NETSPEC_SCALAR_UNARY_KINDS(SET_UNARY)
#undef SET_UNARY
#define SET_BINARY(KIND) ft.set(OpKind::KIND, compile_binary<OpKind::KIND>);
  NETSPEC_SCALAR_BINARY_KINDS(SET_BINARY)
#undef SET_BINARY
  ft.set(OpKind::kConvert, compile_convert);
  ft.set(OpKind::kCompare, compile_compare);
  ft.set(OpKind::kSelect, compile_select);
  ft.set(OpKind::kClamp, compile_clamp);
}

}  // namespace netspec::exec::cpu
