// bilinearUpsample (not lowered yet: accounting only; lowering refuses it by name).
#include "layers/declare.h"

namespace netspec::layers {

Value* account_bilinear_upsample(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<BilinearUpsample>(layer);
  Decl c(lc);
  Fm x = c.image(-1);
  return lc.not_lowered({x.c, x.h * l.scale, x.w * l.scale});
}

NETSPEC_REGISTER_LAYER(bilinearUpsample, account_bilinear_upsample, {.lowered = false})

}  // namespace netspec::layers
