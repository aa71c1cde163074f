// Shapes shared by block kinds of different families: a stage of repeated blocks (residual,
// bottleneck, the mobile blocks) and a patchified image input (convNextStem, patchEmbed).
#pragma once
#include <fmt/format.h>

#include "layers/lower.h"

namespace netspec::layers {

// A stage of n blocks under scopes "block<i>", the first alone strided: x = block(i, stride, x).
template <typename BlockFn>
Value* repeat_blocks(LowerCtx& c, int n, int64_t first_stride, Value* x, BlockFn block) {
  for (int i = 0; i < n; ++i) {
    Scope s(c, fmt::format("block{}", i));
    x = block(i, i == 0 ? first_stride : 1, x);
  }
  return x;
}

// The image input of ic channels, whose H and W must be multiples of `patch` (a patchify conv,
// kernel = stride = patch).
inline Fm patched_image(const LowerCtx& c, int64_t ic, int64_t patch) {
  Fm f = c.image(ic);
  c.check(f.h % patch == 0 && f.w % patch == 0,
          "patch size does not divide the image (got {}x{}, patch {})", f.h, f.w, patch);
  return f;
}

}  // namespace netspec::layers
