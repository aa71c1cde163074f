// positionalEncoding: NeRF's γ per coordinate, coordinate-major: [B, D] -> [B, D·(1 + 2L)] with
// row d·(1+2L) + (0, 1+2k, 2+2k) = (p_d, sin(2^k π p_d), cos(2^k π p_d)) for k < L = nFreq.
// Coordinate-major makes γ(concat(pos, dir)) = concat(γ(pos), γ(dir)), the split nerfMLP reads.
#include <numbers>

#include "layers/lower.h"

namespace netspec::layers {

Value* lower_positional_encoding(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<PositionalEncoding>(layer);
  const int64_t d = c.vec(l.inDim), n = x->type.dim(0);
  hlo::Builder& b = c.b;
  Value* p = b.reshape(x, {n, d, 1});
  std::vector<Value*> parts{p};
  for (int k = 0; k < l.nFreq; ++k) {
    Value* arg = b.multiply(p, b.constant_splat(std::numbers::pi * std::ldexp(1.0, k), p->type));
    parts.push_back(b.sine(arg));
    parts.push_back(b.cosine(arg));
  }
  return b.reshape(b.concatenate(parts, 2), {n, d * (1 + 2 * int64_t{l.nFreq})});
}

NETSPEC_REGISTER_LAYER(positionalEncoding, lower_positional_encoding, {.field_min = {{"nFreq", 0}}})

}  // namespace netspec::layers
