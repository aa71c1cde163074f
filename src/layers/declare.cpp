// Declarations without IR for the kinds not lowered yet (declare.h).
#include "layers/declare.h"

#include "core/checked.h"

namespace netspec::layers {

Fm Decl::tap(const char* what, int64_t c, int64_t h, int64_t w) const {
  ctx.tap(what, c, h, w);
  return {c, h, w};
}

Fm Decl::conv(const std::string& name, Fm x, int64_t oc, int64_t k, int64_t stride, int64_t groups,
              bool bias, Padding pad, int64_t dilation) {
  if (x.c % groups != 0 || oc % groups != 0)
    fail("{}: groups {} do not divide channels {} -> {}", ctx.full(name), groups, x.c, oc);
  Fm y{oc, conv_out(x.h, k, stride, pad, dilation), conv_out(x.w, k, stride, pad, dilation)};
  if (y.h <= 0 || y.w <= 0)
    fail("{}: spatial size goes to zero ({}x{} with kernel {} stride {})", ctx.full(name), x.h, x.w,
         k, stride);
  param(dot(name, "weight"), {oc, x.c / groups, k, k}, ParamInit::convWeight, true);
  if (bias) param(dot(name, "bias"), {oc}, ParamInit::zeros, false);
  add_flops(checked_product({2, y.h, y.w, oc, x.c / groups, k, k}, ctx.full(name)));
  return y;
}

void Decl::ln(const std::string& name, int64_t d, bool bias) {
  param(dot(name, "weight"), {d}, ParamInit::ones, false);
  if (bias) param(dot(name, "bias"), {d}, ParamInit::zeros, false);
}

void Decl::linear(const std::string& name, int64_t in_f, int64_t out_f, bool bias, int64_t rows) {
  param(dot(name, "weight"), {out_f, in_f}, ParamInit::linearWeight, true);
  if (bias) param(dot(name, "bias"), {out_f}, ParamInit::zeros, false);
  add_flops(checked_product({2, rows, in_f, out_f}, ctx.full(name)));
}

Fm Decl::conv_bn(const std::string& name, Fm x, int64_t oc, int64_t k, int64_t stride,
                 int64_t groups, int64_t dilation) {
  Fm y = conv(dot(name, "conv"), x, oc, k, stride, groups, false, Padding::same, dilation);
  bn(dot(name, "bn"), oc);
  return y;
}

void Decl::vit_block(int64_t t, int64_t dim, int64_t heads, int64_t mlp_dim) {
  check(dim % heads == 0, "heads {} do not divide dim {}", heads, dim);
  ln("norm1", dim);
  linear("attn.qkv", dim, 3 * dim, true, t);
  add_flops(checked_product({4, t, t, dim}, "attention"));  // q·kᵀ and attn·v
  linear("attn.proj", dim, dim, true, t);
  ln("norm2", dim);
  linear("mlp.fc1", dim, mlp_dim, true, t);
  linear("mlp.fc2", mlp_dim, dim, true, t);
}

}  // namespace netspec::layers
