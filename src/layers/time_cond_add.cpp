// timeCondAdd: adds a learned projection of the diffusion timestep to every position of the map.
// The timestep rides in the LAST channel of the net input (the DDPM trainer fills that plane with
// s = t/T, as the seed's prependTChannel): s = input[b, C_in - 1, 0, 0]. Embedding e = (sin(s·f_k)
// for k < nFreq, cos(s·f_k) for k < nFreq), f_k = π·2^k; y = x + (time_proj(e))[b, c] over H, W.
#include <numbers>

#include "layers/lower.h"

namespace netspec::layers {

// [B, 2·nFreq] sin/cos features of s [B].
Value* time_embedding(hlo::Builder& b, Value* s, int64_t n_freq) {
  const int64_t n = s->type.dim(0);
  std::vector<double> f;
  for (int64_t k = 0; k < n_freq; ++k) f.push_back(std::numbers::pi * std::ldexp(1.0, int(k)));
  const Shape shape{n, n_freq};
  Value* freqs = b.broadcast_in_dim(b.constant(Tensor::from<double>(s->type.dtype(), {n_freq}, f)),
                                    shape, {1});
  Value* arg = b.multiply(b.broadcast_in_dim(s, shape, {0}), freqs);
  return b.concatenate({b.sine(arg), b.cosine(arg)}, 1);
}

Value* lower_time_cond_add(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<TimeCondAdd>(layer);
  c.image(l.ch);
  Value* in = c.history->at(0);
  const Shape& is = in->type.shape();
  if (is.size() != 4)
    c.fail("needs an image net input whose last channel carries t/T (got input [{}])",
           fmt::join(is.begin() + 1, is.end(), ", "));
  hlo::Builder& b = c.b;
  Value* s = b.reshape(b.slice(in, {0, is[1] - 1, 0, 0}, {is[0], is[1], 1, 1}), {is[0]});
  Value* t = linear(c, "time_proj", time_embedding(b, s, l.nFreq), l.ch);  // [B, ch]
  return b.add(x, b.broadcast_in_dim(t, x->type.shape(), {0, 1}));
}

NETSPEC_REGISTER_LAYER(timeCondAdd, lower_time_cond_add)

}  // namespace netspec::layers
