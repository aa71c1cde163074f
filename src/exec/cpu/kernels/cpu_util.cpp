// Shared helpers of the cpu kernels: a parallel strided copy (transpose, reverse, layout
// changes) that tiles the plane of the two dims with unit strides when they differ.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/bf16.h"
#include "core/thread_pool.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/cpu/dnnl_util.h"
#include "exec/cpu/kernels.h"

namespace netspec::exec::cpu {
namespace {

template <typename T>
void copy_typed(T* dst, const T* src, const std::vector<int64_t>& dims,
                const std::vector<int64_t>& sst) {
  const int64_t r = static_cast<int64_t>(dims.size());
  std::vector<int64_t> dst_st = row_major_strides(dims);
  const int64_t inner = dims[static_cast<size_t>(r - 1)];
  const int64_t inner_s = sst[static_cast<size_t>(r - 1)];
  int64_t p =
      -1;  // another dim whose source stride is 1: tile (p, last) to keep both streams local
  if (inner_s != 1 && r >= 2)
    for (int64_t d = r - 2; d >= 0; --d)
      if (sst[static_cast<size_t>(d)] == 1 && dims[static_cast<size_t>(d)] > 1) {
        p = d;
        break;
      }
  // A row: the last dim, plus up to two more inner dims while rows stay short (< 64 elements)
  // when not tiling, copied by a small loop nest (the 2x2 pixel shuffles of a transposed
  // convolution have rows of two elements).
  int64_t n_row = 1;
  if (p < 0)
    while (n_row < 3 && n_row < r &&
           num_elements(std::vector<int64_t>(dims.end() - n_row, dims.end())) < 64)
      ++n_row;
  int64_t rd[3] = {1, 1, 1}, rs[3] = {0, 0, 0};
  for (int64_t k = 0; k < n_row; ++k) {
    rd[2 - k] = dims[static_cast<size_t>(r - 1 - k)];
    rs[2 - k] = sst[static_cast<size_t>(r - 1 - k)];
  }
  // Outer iteration space: every dim but the row's (and p when tiling).
  std::vector<int64_t> outer_dims;
  std::vector<int64_t> outer_ids;
  for (int64_t d = 0; d < r - n_row; ++d)
    if (d != p) {
      outer_dims.push_back(dims[static_cast<size_t>(d)]);
      outer_ids.push_back(d);
    }
  int64_t outer = num_elements(outer_dims);
  const int64_t row_work = p >= 0 ? inner * dims[static_cast<size_t>(p)] : rd[0] * rd[1] * rd[2];
  int64_t grain = std::max<int64_t>(1, kGrainCheap / std::max<int64_t>(row_work, 1));
  const int64_t n_outer = static_cast<int64_t>(outer_ids.size());
  parallel_for(outer, grain, [&](int64_t b, int64_t e) {
    // Odometer over the outer dims: one divmod pass at the chunk start, then incremental offsets.
    std::vector<int64_t> idx(static_cast<size_t>(n_outer));
    int64_t so = 0, dof = 0;
    for (int64_t k = n_outer - 1, rem = b; k >= 0; --k) {
      size_t d = static_cast<size_t>(outer_ids[static_cast<size_t>(k)]);
      idx[static_cast<size_t>(k)] = rem % dims[d];
      rem /= dims[d];
      so += idx[static_cast<size_t>(k)] * sst[d];
      dof += idx[static_cast<size_t>(k)] * dst_st[d];
    }
    for (int64_t o = b; o < e; ++o) {
      if (p < 0) {
        T* dp = dst + dof;
        for (int64_t i0 = 0; i0 < rd[0]; ++i0)
          for (int64_t i1 = 0; i1 < rd[1]; ++i1) {
            const T* sp = src + so + i0 * rs[0] + i1 * rs[1];
            if (rs[2] == 1 && rd[2] >= 16) {
              std::memcpy(dp, sp, static_cast<size_t>(rd[2]) * sizeof(T));
            } else {
              for (int64_t j = 0; j < rd[2]; ++j) dp[j] = sp[j * rs[2]];
            }
            dp += rd[2];
          }
      } else {
        const int64_t np = dims[static_cast<size_t>(p)], dps = dst_st[static_cast<size_t>(p)];
        constexpr int64_t kTile = 32;
        for (int64_t i0 = 0; i0 < np; i0 += kTile)
          for (int64_t j0 = 0; j0 < inner; j0 += kTile) {
            int64_t i1 = std::min(np, i0 + kTile), j1 = std::min(inner, j0 + kTile);
            for (int64_t i = i0; i < i1; ++i)
              for (int64_t j = j0; j < j1; ++j) dst[dof + i * dps + j] = src[so + i + j * inner_s];
          }
      }
      for (int64_t k = n_outer - 1; k >= 0; --k) {  // next outer index
        const size_t d = static_cast<size_t>(outer_ids[static_cast<size_t>(k)]);
        so += sst[d];
        dof += dst_st[d];
        if (++idx[static_cast<size_t>(k)] < dims[d]) break;
        idx[static_cast<size_t>(k)] = 0;
        so -= dims[d] * sst[d];
        dof -= dims[d] * dst_st[d];
      }
    }
  });
}

struct Bytes16 {
  uint64_t a, b;
};

}  // namespace

void strided_copy(void* dst, const void* src, const std::vector<int64_t>& dims_in,
                  const std::vector<int64_t>& strides_in, size_t elem) {
  // Drop size-1 dims and merge neighbours that are contiguous in the source.
  std::vector<int64_t> dims, st;
  for (size_t d = 0; d < dims_in.size(); ++d) {
    if (dims_in[d] == 0) return;
    if (dims_in[d] == 1) continue;
    if (!dims.empty() && st.back() == strides_in[d] * dims_in[d]) {
      dims.back() *= dims_in[d];
      st.back() = strides_in[d];
      continue;
    }
    dims.push_back(dims_in[d]);
    st.push_back(strides_in[d]);
  }
  if (dims.empty()) {
    std::memcpy(dst, src, elem);
    return;
  }
  switch (elem) {
    case 1:
      return copy_typed(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), dims, st);
    case 2:
      return copy_typed(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src), dims, st);
    case 4:
      return copy_typed(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), dims, st);
    case 8:
      return copy_typed(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src), dims, st);
    case 16:
      return copy_typed(static_cast<Bytes16*>(dst), static_cast<const Bytes16*>(src), dims, st);
    default:
      break;
  }
  fail("cpu", "strided_copy: unsupported element size {}", elem);
}

bool bf16_emulated() {
  const char* e = std::getenv("NETSPEC_BF16_EMULATE");
  return e && *e && std::string_view(e) != "0";
}

bool bf16_products_in_f32() {
  return bf16_emulated() || !onednn_has_isa(dnnl::cpu_isa::avx512_core_bf16);  // AMX has its bits
}

bool bf16_widened_convolutions() {
  const char* e = std::getenv("NETSPEC_BF16_EMULATE");
  return !(e && std::string_view(e) == "0") && bf16_products_in_f32();
}

void widen_bf16(const uint16_t* src, float* dst, int64_t n) {
  parallel_for(n, kGrainCheap,
               [&](int64_t b, int64_t e) { bf16_to_f32_n(src + b, dst + b, e - b); });
}

bool contiguous_block(const Shape& shape, const Shape& sizes) {
  size_t k = 0;  // the first dim with a size other than 1
  while (k < sizes.size() && sizes[k] == 1) ++k;
  for (size_t d = k + 1; d < sizes.size(); ++d)
    if (sizes[d] != shape[d]) return false;
  return true;
}

std::vector<int64_t> permuted_strides(const Shape& shape, const std::vector<int64_t>& perm) {
  std::vector<int64_t> rs = row_major_strides(shape), out;
  for (int64_t p : perm) out.push_back(rs[static_cast<size_t>(p)]);
  return out;
}

hlo::I64s i64s_attr(const hlo::Op& op, const std::string& name) {
  if (auto* p = op.attrs.get_if<hlo::I64s>(name)) return *p;
  if (auto* d = op.attrs.get_if<hlo::DenseAttr>(name)) {
    hlo::I64s v;
    for (int64_t i = 0; i < d->value.numel(); ++i) v.push_back(d->value.as_int64(i));
    return v;
  }
  return {};
}

std::optional<WindowAttrs> undilated_window(const hlo::Op& op, size_t r) {
  WindowAttrs w;
  w.win = i64s_attr(op, "window_dimensions");
  w.strides = i64s_attr(op, "window_strides");
  if (w.strides.empty()) w.strides.assign(r, 1);
  for (const char* name : {"base_dilations", "window_dilations"})
    for (int64_t v : i64s_attr(op, name))
      if (v != 1) return std::nullopt;
  hlo::I64s pad = i64s_attr(op, "padding");
  w.lo.assign(r, 0);
  if (!pad.empty()) {
    if (pad.size() != 2 * r) return std::nullopt;
    for (size_t d = 0; d < r; ++d) w.lo[d] = pad[2 * d];
  }
  if (w.win.size() != r || w.strides.size() != r) return std::nullopt;
  return w;
}

}  // namespace netspec::exec::cpu
