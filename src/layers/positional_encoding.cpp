// positionalEncoding (not lowered yet: accounting only; lowering refuses it by name).
// NeRF encoding γ(p) = (p, sin(2^k π p), cos(2^k π p)) for k < nFreq: [inDim (1 + 2 nFreq)].
#include "layers/declare.h"

namespace netspec::layers {

Value* account_positional_encoding(LowerCtx& lc, const Layer& layer, Value*) {
  const auto& l = std::get<PositionalEncoding>(layer);
  Decl c(lc);
  c.vec(l.inDim);
  return lc.not_lowered({int64_t{l.inDim} * (1 + 2 * l.nFreq)});
}

NETSPEC_REGISTER_LAYER(positionalEncoding, account_positional_encoding,
                       {.lowered = false, .field_min = {{"nFreq", 0}}})

}  // namespace netspec::layers
