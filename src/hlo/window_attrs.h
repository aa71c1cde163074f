// Window attributes of a verified op (convolution, reduce_window, select_and_scatter, slice, pad)
// with the spec's defaults where the op does not carry them. No checks here: the type rules
// (verify.cpp: i64s_or, padding_attr) reject malformed ones before any reader runs.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "hlo/ir.h"

namespace netspec::hlo {

// The i64 array attribute `name`, or n copies of dflt when the op does not carry it.
inline I64s attr_i64s_or(const Op& op, const char* name, size_t n, int64_t dflt) {
  if (auto* p = op.attrs.get_if<I64s>(name)) return *p;
  return I64s(n, dflt);
}

// The `padding` attribute (dense [n, 2]) as (low, high) per dim, zeros when absent.
inline std::vector<std::pair<int64_t, int64_t>> attr_padding(const Op& op, size_t n) {
  std::vector<std::pair<int64_t, int64_t>> pads(n, {0, 0});
  if (auto* p = op.attrs.get_if<DenseAttr>("padding"))
    for (size_t i = 0; i < n; ++i)
      pads[i] = {p->value.as_int64(static_cast<int64_t>(2 * i)),
                 p->value.as_int64(static_cast<int64_t>(2 * i + 1))};
  return pads;
}

}  // namespace netspec::hlo
