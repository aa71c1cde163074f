// waveNetBlock (WaveNet, van den Oord et al. 2016) on a sequence [T, resCh], nLayers layers; layer
// i has dilation d = 2^i and, with Conv1d weights [out, in, k] (PyTorch layout):
//   h = W₀·x[t-d] + W₁·x[t] + b          dilated causal conv k=2, resCh -> 2·resCh (x[<0] = 0)
//   z = tanh(h[:r]) ⊙ σ(h[r:])            gated activation (filter | gate halves)
//   skip += W_skip·z + b_skip;  x = x + W_res·z + b_res
// Output relu(Σ skip) [T, skipCh] (the paper's ReLU after the skip sum; the next layer is its
// 1x1). Output t depends on inputs ≤ t only. Params per layer: dilated, res, skip (weight, bias).
#include "layers/sequence.h"

namespace netspec::layers {

Value* delay(hlo::Builder& b, Value* x, int64_t d, double fill) {
  const Shape& s = x->type.shape();
  if (d >= s[1]) return b.constant_splat(fill, x->type);
  hlo::I64s limit = s, lo(s.size(), 0), hi(s.size(), 0);
  limit[1] = s[1] - d;
  lo[1] = d;
  Value* head = b.slice(x, hlo::I64s(s.size(), 0), limit);
  return b.pad(head, b.scalar(fill, x->type.dtype()), lo, hi);
}

namespace {

// Tap j of a Conv1d weight [out, in, k] as a Linear weight [out, in].
Value* tap(hlo::Builder& b, Value* w, int64_t j) {
  const Shape& s = w->type.shape();
  return b.reshape(b.slice(w, {0, 0, j}, {s[0], s[1], j + 1}), {s[0], s[1]});
}

}  // namespace

Value* lower_wave_net_block(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<WaveNetBlock>(layer);
  c.tokens(l.resCh);
  c.check(l.nLayers <= 30, "nLayers gives dilation 2^(nLayers-1) (got {}, expected <= 30)",
          l.nLayers);
  hlo::Builder& b = c.b;
  const int64_t r = l.resCh, bt = x->type.dim(0), t = x->type.dim(1);
  Value* skip = nullptr;
  for (int i = 0; i < l.nLayers; ++i) {
    Scope s(c, fmt::format("layers.{}", i));
    Value* wd = c.param("dilated.weight", {2 * r, r, 2}, ParamInit::convWeight, true);
    Value* bd = c.param("dilated.bias", {2 * r}, ParamInit::zeros, false);
    Value* h = b.add(linear_apply(b, delay(b, x, int64_t{1} << i), tap(b, wd, 0)),
                     linear_apply(b, x, tap(b, wd, 1), bd));
    Value* filt = b.slice(h, {0, 0, 0}, {bt, t, r});
    Value* gate = b.slice(h, {0, 0, r}, {bt, t, 2 * r});
    Value* z = b.multiply(b.tanh(filt), b.logistic(gate));
    Value* wr = c.param("res.weight", {r, r, 1}, ParamInit::convWeight, true);
    Value* br = c.param("res.bias", {r}, ParamInit::zeros, false);
    Value* ws = c.param("skip.weight", {l.skipCh, r, 1}, ParamInit::convWeight, true);
    Value* bs = c.param("skip.bias", {l.skipCh}, ParamInit::zeros, false);
    x = b.add(x, linear_apply(b, z, tap(b, wr, 0), br));
    Value* sk = linear_apply(b, z, tap(b, ws, 0), bs);
    skip = skip ? b.add(skip, sk) : sk;
  }
  return activation(b, skip, Activation::relu);
}

NETSPEC_REGISTER_LAYER(waveNetBlock, lower_wave_net_block)

}  // namespace netspec::layers
