// swinStage: Swin Transformer blocks x nBlocks on an image [dim, H, W] (timm/torchvision
// SwinTransformerBlock), computed channels-last [B, H, W, C]; per block:
//   x = x + proj(W-MSA(LN1(x)));  x = x + mlp.3(gelu(mlp.0(LN2(x))))
// W-MSA: odd blocks roll the map by -⌊w/2⌋ (rows, cols), split it into w x w windows, attend
// within each window with softmax(q·kᵀ/√dh + B[rel(i,j)] + M)·v, and roll back. B is the
// relative position bias table [(2w-1)², heads] gathered by rel(i, j) = (Δh + w-1)(2w-1) +
// (Δw + w-1); M (shifted blocks) is -100 between tokens of different regions of the rolled map
// (timm's attn_mask). A map no larger than the window is not shifted (timm, torchvision).
// Params per block (torchvision order): norm1, attn.qkv, attn.proj,
// attn.relative_position_bias_table, norm2, mlp.0, mlp.3.
#include "layers/attention.h"

namespace netspec::layers {
namespace {

using hlo::Builder;

// torch.roll(x, shift, dim) for 0 <= shift < n: y[i] = x[(i - shift) mod n].
Value* roll(Builder& b, Value* x, int64_t shift, int64_t dim) {
  int64_t n = x->type.dim(dim);
  shift = ((shift % n) + n) % n;
  if (shift == 0) return x;
  hlo::I64s lo(x->type.rank(), 0), hi = x->type.shape(), lo2 = lo, hi2 = hi;
  lo[dim] = n - shift;
  hi2[dim] = n - shift;
  return b.concatenate({b.slice(x, lo, hi), b.slice(x, lo2, hi2)}, dim);
}

// [B, H, W, C] -> [B·nWin, w·w, C], windows row-major (timm window_partition).
Value* window_partition(Builder& b, Value* x, int64_t w) {
  const Shape& s = x->type.shape();
  Value* y = b.reshape(x, {s[0], s[1] / w, w, s[2] / w, w, s[3]});
  y = b.transpose(y, {0, 1, 3, 2, 4, 5});
  return b.reshape(y, {s[0] * (s[1] / w) * (s[2] / w), w * w, s[3]});
}

Value* window_reverse(Builder& b, Value* win, const Shape& s, int64_t w) {
  Value* y = b.reshape(win, {s[0], s[1] / w, s[2] / w, w, w, s[3]});
  return b.reshape(b.transpose(y, {0, 1, 3, 2, 4, 5}), s);
}

// The rolled map's region label along one dim of size n: 0 on [0, n-w), 1 on [n-w, n-s), 2 on
// [n-s, n) (one region when s = 0). pos: i32 positions.
Value* region(Builder& b, Value* pos, int64_t n, int64_t w, int64_t s) {
  if (s == 0) return b.constant_splat(0, pos->type);
  auto ge = [&](int64_t v) {
    return b.convert(b.compare(pos, b.constant_splat(double(v), pos->type), "GE"), DType::kI32);
  };
  return b.add(ge(n - w), ge(n - s));
}

// M [nWin, N, N]: 0 where tokens i, j of a window share a region of the rolled map, else -100.
Value* shift_mask(Builder& b, int64_t h, int64_t wd, int64_t w, int64_t sh, int64_t sw, DType dt) {
  int64_t nh = h / w, nw = wd / w, n = w * w;
  hlo::Type it = hlo::Type::tensor(DType::kI32, {nh, nw, w, w});
  Value* ww = b.constant_splat(double(w), it);
  Value* row = b.add(b.multiply(b.iota(it, 0), ww), b.iota(it, 2));
  Value* col = b.add(b.multiply(b.iota(it, 1), ww), b.iota(it, 3));
  Value* label = b.add(b.multiply(region(b, row, h, w, sh), b.constant_splat(3, it)),
                       region(b, col, wd, w, sw));
  label = b.reshape(label, {nh * nw, n});
  Shape m{nh * nw, n, n};
  Value* same =
      b.compare(b.broadcast_in_dim(label, m, {0, 1}), b.broadcast_in_dim(label, m, {0, 2}), "EQ");
  hlo::Type mt = hlo::Type::tensor(dt, m);
  return b.select(same, b.constant_splat(0, mt), b.constant_splat(-100, mt));
}

// B [heads, N, N] = table[rel(i, j)] with rel as in the header (timm get_relative_position_index).
Value* relative_bias(Builder& b, Value* table, int64_t w) {
  int64_t n = w * w, heads = table->type.dim(1);
  hlo::Type it = hlo::Type::tensor(DType::kI32, {n, n});
  Value* i = b.iota(it, 0);
  Value* j = b.iota(it, 1);
  Value* ww = b.constant_splat(double(w), it);
  Value* dh = b.subtract(b.divide(i, ww), b.divide(j, ww));
  Value* dw = b.subtract(b.remainder(i, ww), b.remainder(j, ww));
  Value* off = b.constant_splat(double(w - 1), it);
  Value* idx =
      b.add(b.multiply(b.add(dh, off), b.constant_splat(double(2 * w - 1), it)), b.add(dw, off));
  hlo::GatherDims g;
  g.offset_dims = {2};
  g.collapsed_slice_dims = {0};
  g.start_index_map = {0};
  g.index_vector_dim = 2;
  Value* bias = b.gather(table, b.reshape(idx, {n, n, 1}), g, {1, heads});  // [N, N, heads]
  return b.transpose(bias, {2, 0, 1});
}

struct SwinBlock {
  int64_t heads, mlp_dim, window, shift_h, shift_w;
};

// One block on x [B, H, W, C] in the caller's scope.
Value* swin_block(LowerCtx& c, Value* x, const SwinBlock& o, int block) {
  Builder& b = c.b;
  const Shape s = x->type.shape();
  int64_t w = o.window, d = s[3], n = w * w, nwin = (s[1] / w) * (s[2] / w);
  Value* h = layer_norm(c, "norm1", x, 3);
  h = roll(b, roll(b, h, -o.shift_h, 1), -o.shift_w, 2);
  Value* win = window_partition(b, h, w);  // [B·nWin, N, C]
  Value* qkv = linear(c, "attn.qkv", win, 3 * d);
  Value* pw = c.param("attn.proj.weight", {d, d}, ParamInit::linearWeight, true);
  Value* pb = c.param("attn.proj.bias", {d}, ParamInit::zeros, false);
  Value* table = c.param("attn.relative_position_bias_table", {(2 * w - 1) * (2 * w - 1), o.heads},
                         ParamInit::relPosBias, false);
  Value* q = head_split(b, qkv, 0, 3, o.heads);
  Value* k = head_split(b, qkv, 1, 3, o.heads);
  Value* v = head_split(b, qkv, 2, 3, o.heads);
  Value* sc = attention_scores(b, q, k);  // [B·nWin, heads, N, N]
  sc = b.add(sc, b.broadcast_in_dim(relative_bias(b, table, w), sc->type.shape(), {1, 2, 3}));
  if (o.shift_h || o.shift_w) {
    Shape per{s[0], nwin, o.heads, n, n};
    Value* m = shift_mask(b, s[1], s[2], w, o.shift_h, o.shift_w, x->type.dtype());
    sc = b.reshape(b.add(b.reshape(sc, per), b.broadcast_in_dim(m, per, {1, 3, 4})),
                   sc->type.shape());
  }
  Value* out = linear_apply(b, attention_softmax_v_merged(b, sc, v), pw, pb);
  out = window_reverse(b, out, s, w);
  out = roll(b, roll(b, out, o.shift_h, 1), o.shift_w, 2);
  x = b.add(x, c.drop_path(out, block, 0));
  Value* m =
      activation(b, linear(c, "mlp.0", layer_norm(c, "norm2", x, 3), o.mlp_dim), Activation::gelu);
  return b.add(x, c.drop_path(linear(c, "mlp.3", m, d), block, 1));
}

}  // namespace

Value* lower_swin_stage(LowerCtx& c, const Layer& layer, Value* x) {
  const auto& l = std::get<SwinStage>(layer);
  check_heads(c, l.dim, l.heads);
  Fm f = c.image(l.dim);
  c.check(f.h % l.window == 0 && f.w % l.window == 0,
          "window does not divide the feature map (got {}x{}, window {})", f.h, f.w, l.window);
  Builder& b = c.b;
  x = b.transpose(x, {0, 2, 3, 1});  // [B, H, W, C]
  for (int i = 0; i < l.nBlocks; ++i) {
    Scope s(c, fmt::format("blocks.{}", i));
    // odd blocks shift by ⌊w/2⌋ along each dim larger than the window
    int64_t half = i % 2 == 1 ? l.window / 2 : 0;
    SwinBlock o{l.heads, l.mlpDim, l.window, f.h > l.window ? half : 0, f.w > l.window ? half : 0};
    x = swin_block(c, x, o, i);
  }
  return b.transpose(x, {0, 3, 1, 2});
}

NETSPEC_REGISTER_LAYER(swinStage, lower_swin_stage, {.ramp_family = "swin", .ramp = Ramp::last})

}  // namespace netspec::layers
