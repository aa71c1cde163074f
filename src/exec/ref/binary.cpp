// Reference kernels: elementwise binary ops, compare, clamp, select. The scalar math (integer
// wrapping, XLA's division-by-zero results, IEEE max/min) is exec/scalar_ops.h.
#include <cmath>
#include <limits>
#include <type_traits>

#include "exec/ref/kernel_util.h"
#include "exec/scalar_ops.h"
#include "hlo/op_family.h"

namespace netspec::exec::ref {
namespace {

[[noreturn]] void bad_type(const hlo::Op& op, DType t) {
  fail(op_mnemonic(op.kind), "element type {} is not supported", dtype_name(t));
}

void check_same(const hlo::Op& op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    fail(op_mnemonic(op.kind), "operand types differ (got {} and {})", a.type_str(), b.type_str());
}

// An op of the scalar table (exec/scalar_ops.h): result[i] = Scalar<K>::apply(a[i], b[i]).
template <hlo::OpKind K>
std::vector<Tensor> eval_binary(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  using S = Scalar<K>;
  check_same(op, in[0], in[1]);
  Tensor out = result_tensor(op);
  std::string where(op_mnemonic(op.kind));
  visit_dtype(in[0].dtype(), where.c_str(), [&](auto z) {
    using T = decltype(z);
    if constexpr (in_domain<S::kDomain, T>()) {
      const T* a = in[0].data<T>();
      const T* b = in[1].data<T>();
      T* o = out.data<T>();
      for (int64_t i = 0; i < out.numel(); ++i) o[i] = S::apply(a[i], b[i]);
    } else {
      bad_type(op, in[0].dtype());
    }
  });
  return {out};
}

// Total order key of a float: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
template <typename T>
auto total_order_key(T x) {
  using S = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  using U = std::make_unsigned_t<S>;
  S s = std::bit_cast<S>(x);
  // Negative patterns: flip all bits but the sign so that larger magnitudes sort lower.
  return s < 0 ? static_cast<S>(static_cast<U>(s) ^ (~U(0) >> 1)) : s;
}

template <typename T>
bool compare_dir(CmpDir dir, T a, T b) {
  return with_cmp_dir(dir, [&](auto d) { return compare<decltype(d)::value>(a, b); });
}

// compare: FLOAT is IEEE (NaN unordered: only NE is true); TOTALORDER orders every bit
// pattern; SIGNED/UNSIGNED reinterpret integers; i1 compares as unsigned (false < true).
std::vector<Tensor> eval_compare(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  check_same(op, in[0], in[1]);
  const std::string& dir_name = op.attrs.get_enum("comparison_direction");
  std::optional<CmpDir> d = cmp_dir(dir_name);
  if (!d) fail("compare", "unknown comparison_direction '{}'", dir_name);
  const CmpDir dir = *d;
  std::string ctype;
  if (auto* e = op.attrs.get_if<hlo::EnumAttr>("compare_type")) ctype = e->value;
  Tensor out = result_tensor(op);
  uint8_t* o = static_cast<uint8_t*>(out.raw());
  visit_dtype(in[0].dtype(), "compare", [&](auto z) {
    using T = decltype(z);
    const T* a = in[0].data<T>();
    const T* b = in[1].data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      bool r;
      if constexpr (std::is_floating_point_v<T>) {
        if (ctype == "TOTALORDER")
          r = compare_dir(dir, total_order_key(a[i]), total_order_key(b[i]));
        else
          r = compare_dir(dir, a[i], b[i]);
      } else if constexpr (std::is_same_v<T, bool>) {
        r = compare_dir(dir, static_cast<int>(a[i]), static_cast<int>(b[i]));
      } else {
        using S = std::make_signed_t<T>;
        using U = std::make_unsigned_t<T>;
        if (ctype == "UNSIGNED")
          r = compare_dir(dir, static_cast<U>(a[i]), static_cast<U>(b[i]));
        else if (ctype == "SIGNED")
          r = compare_dir(dir, static_cast<S>(a[i]), static_cast<S>(b[i]));
        else
          r = compare_dir(dir, a[i], b[i]);
      }
      o[i] = r ? 1 : 0;
    }
  });
  return {out};
}

// clamp(min, x, max) = minimum(maximum(x, min), max); min and max may be 0-d (broadcast).
std::vector<Tensor> eval_clamp(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  const Tensor &lo = in[0], &x = in[1], &hi = in[2];
  for (const Tensor* t : {&lo, &hi})
    if (t->dtype() != x.dtype() || (t->rank() != 0 && t->shape() != x.shape()))
      fail("clamp", "min/max must be 0-d or match the operand (got {} for {})", t->type_str(),
           x.type_str());
  Tensor out = result_tensor(op);
  visit_dtype(x.dtype(), "clamp", [&](auto z) {
    using T = decltype(z);
    const T* pl = lo.data<T>();
    const T* px = x.data<T>();
    const T* ph = hi.data<T>();
    T* o = out.data<T>();
    bool sl = lo.rank() == 0, sh = hi.rank() == 0;
    for (int64_t i = 0; i < out.numel(); ++i)
      o[i] = Scalar<hlo::OpKind::kClamp>::apply(pl[sl ? 0 : i], px[i], ph[sh ? 0 : i]);
  });
  return {out};
}

// select(pred, a, b): pred ? a : b elementwise; pred may be 0-d.
std::vector<Tensor> eval_select(const hlo::Op& op, const std::vector<Tensor>& in, RunContext&) {
  const Tensor &p = in[0], &a = in[1], &b = in[2];
  check_same(op, a, b);
  if (p.dtype() != DType::kI1 || (p.rank() != 0 && p.shape() != a.shape()))
    fail("select", "pred must be i1, 0-d or shaped like the operands (got {})", p.type_str());
  Tensor out = result_tensor(op);
  bool scalar = p.rank() == 0;
  for (int64_t i = 0; i < out.numel(); ++i)
    copy_elem(out, i, pred_at(p, scalar ? 0 : i) ? a : b, i);
  return {out};
}

}  // namespace

void register_binary_kernels(Kernel* t) {
  hlo::FamilyTable<Kernel> ft(t, "binary.cpp", {"binary"});
  using K = hlo::OpKind;
#define SET_BINARY(KIND) ft.set(K::KIND, eval_binary<K::KIND>);
  NETSPEC_SCALAR_BINARY_KINDS(SET_BINARY)
#undef SET_BINARY
  ft.set(K::kCompare, eval_compare);
  ft.set(K::kClamp, eval_clamp);
  ft.set(K::kSelect, eval_select);
}

}  // namespace netspec::exec::ref
