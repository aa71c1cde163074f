// Helpers shared by the reference kernels (private to src/exec/ref): result allocation,
// row-major index iteration, element byte copies and tolerant attribute getters. Kernels that
// only move data work on raw bytes so they serve every element type without templates.
#pragma once
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "exec/ref/interpreter.h"
#include "hlo/ir.h"

namespace netspec::exec::ref {

using hlo::I64s;

// Zero-filled tensor of result i's type.
inline Tensor result_tensor(const hlo::Op& op, size_t i = 0) {
  const hlo::Type& t = op.results.at(i)->type;
  if (!t.is_tensor()) fail(op_mnemonic(op.kind), "result {} is not a tensor (got {})", i, t.str());
  return Tensor(t.dtype(), t.shape());
}

// Calls f(idx) for every multi-index of `shape` in row-major order (nothing for zero-size).
// The loop lives out of line (region.cpp): one copy, and no false GCC heap warnings when nested.
using IndexVisitor = void (*)(void* fn, const I64s& idx);
void for_each_index_impl(const Shape& shape, void* fn, IndexVisitor visit);
template <typename F>
void for_each_index(const Shape& shape, F&& f) {
  using Fn = std::remove_reference_t<F>;
  for_each_index_impl(shape, const_cast<void*>(static_cast<const void*>(&f)),
                      [](void* p, const I64s& idx) { (*static_cast<Fn*>(p))(idx); });
}

inline int64_t linear_index(const I64s& idx, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
  return off;
}

inline void copy_elem(Tensor& dst, int64_t di, const Tensor& src, int64_t si) {
  size_t es = dtype_size(src.dtype());
  std::memcpy(static_cast<uint8_t*>(dst.raw()) + static_cast<size_t>(di) * es,
              static_cast<const uint8_t*>(src.raw()) + static_cast<size_t>(si) * es, es);
}

// 0-d tensor holding a copy of element i of t.
inline Tensor scalar_at(const Tensor& t, int64_t i) {
  Tensor s(t.dtype(), {});
  copy_elem(s, 0, t, i);
  return s;
}

// Integer value of element i of an integer (or i1) tensor.
inline int64_t int_at(const Tensor& t, int64_t i = 0) { return t.as_int64(i); }
// Truth of element i of an i1 tensor.
inline bool pred_at(const Tensor& t, int64_t i = 0) {
  return static_cast<const uint8_t*>(t.raw())[i] != 0;
}

// i64 array attribute, or n copies of dflt when absent.
inline I64s i64s_or(const hlo::Op& op, const std::string& name, size_t n, int64_t dflt) {
  if (auto* p = op.attrs.get_if<I64s>(name)) {
    if (!p->empty() || n == 0) return *p;
  }
  if (auto* d = op.attrs.get_if<hlo::DenseAttr>(name)) {
    I64s v;
    for (int64_t i = 0; i < d->value.numel(); ++i) v.push_back(d->value.as_int64(i));
    return v;
  }
  return I64s(n, dflt);
}

// Boolean array attribute (array<i1: ...>, or a dense i1 tensor), false x n when absent.
inline std::vector<bool> bools_or(const hlo::Op& op, const std::string& name, size_t n) {
  if (auto* p = op.attrs.get_if<std::vector<bool>>(name)) {
    if (!p->empty()) return *p;
  }
  if (auto* d = op.attrs.get_if<hlo::DenseAttr>(name)) {
    std::vector<bool> v;
    for (int64_t i = 0; i < d->value.numel(); ++i) v.push_back(d->value.as_int64(i) != 0);
    return v;
  }
  return std::vector<bool>(n, false);
}

// (low, high) padding per dim from an Nx2 i64 dense attribute (or a flat i64 array); zeros
// when absent.
inline std::vector<std::pair<int64_t, int64_t>> padding_or_zero(const hlo::Op& op,
                                                                const std::string& name, size_t n) {
  std::vector<std::pair<int64_t, int64_t>> pads(n, {0, 0});
  I64s flat = i64s_or(op, name, 0, 0);
  if (flat.empty()) return pads;
  if (flat.size() != 2 * n)
    fail(op_mnemonic(op.kind), "attribute '{}' has {} values (expected {})", name, flat.size(),
         2 * n);
  for (size_t i = 0; i < n; ++i) pads[i] = {flat[2 * i], flat[2 * i + 1]};
  return pads;
}

}  // namespace netspec::exec::ref

namespace netspec::exec::ref {

// Evaluates a region on 0-d tensors. A region that is exactly one binary op of its two
// arguments (the usual add/max reducer) is computed directly instead of interpreted.
class ScalarRegion {
 public:
  ScalarRegion(const hlo::Block& block, RunContext& ctx);
  std::vector<Tensor> operator()(const std::vector<Tensor>& args) const;
  // Fast form for 2-argument single-op regions: out[io] = a[ia] op b[ib]; false if not fast.
  bool fast() const { return fast_kind_.has_value(); }
  std::optional<hlo::OpKind> fast_kind() const { return fast_kind_; }
  void apply_fast(const Tensor& a, int64_t ia, const Tensor& b, int64_t ib, Tensor& out,
                  int64_t io) const;

 private:
  const hlo::Block& block_;
  RunContext& ctx_;
  std::optional<hlo::OpKind> fast_kind_;
  bool swapped_ = false;
};

}  // namespace netspec::exec::ref
