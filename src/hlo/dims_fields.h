// The i64-list fields of the dimension-number attributes (#stablehlo.dot, .gather, .scatter)
// with their MLIR names, in the order they print; the text printer and parser and autodiff read
// them from here. Gather's and scatter's line up: field i of a gather is field i of the scatter
// that is its transpose. Also dot_general's free dims, which the ref and cpu kernels and the VJP
// rule derive from #stablehlo.dot.
#pragma once
#include <algorithm>
#include <array>
#include <utility>

#include "hlo/attr.h"

namespace netspec::hlo {

template <typename Dims>
using DimsField = std::pair<const char*, I64s Dims::*>;

inline constexpr std::array<DimsField<DotDims>, 4> kDotDimsFields{{
    {"lhs_batching_dimensions", &DotDims::lhs_batching},
    {"rhs_batching_dimensions", &DotDims::rhs_batching},
    {"lhs_contracting_dimensions", &DotDims::lhs_contracting},
    {"rhs_contracting_dimensions", &DotDims::rhs_contracting},
}};

inline constexpr std::array<DimsField<GatherDims>, 5> kGatherDimsFields{{
    {"offset_dims", &GatherDims::offset_dims},
    {"collapsed_slice_dims", &GatherDims::collapsed_slice_dims},
    {"operand_batching_dims", &GatherDims::operand_batching_dims},
    {"start_indices_batching_dims", &GatherDims::start_indices_batching_dims},
    {"start_index_map", &GatherDims::start_index_map},
}};

inline constexpr std::array<DimsField<ScatterDims>, 5> kScatterDimsFields{{
    {"update_window_dims", &ScatterDims::update_window_dims},
    {"inserted_window_dims", &ScatterDims::inserted_window_dims},
    {"input_batching_dims", &ScatterDims::input_batching_dims},
    {"scatter_indices_batching_dims", &ScatterDims::scatter_indices_batching_dims},
    {"scatter_dims_to_operand_dims", &ScatterDims::scatter_dims_to_operand_dims},
}};

// The dims of a dot_general operand of rank `rank` that are neither batching nor contracting, in
// order: the result is batch dims ++ lhs free dims ++ rhs free dims.
inline I64s free_dims(int64_t rank, const I64s& batching, const I64s& contracting) {
  I64s f;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(batching.begin(), batching.end(), d) == batching.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end())
      f.push_back(d);
  return f;
}

}  // namespace netspec::hlo
