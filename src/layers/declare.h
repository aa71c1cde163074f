// Declarations without IR, for the kinds whose lowering is not written yet: the same names,
// shapes and FLOPs their accounting has always had, on per-sample shapes (Fm, no batch dim).
// A kind's body wraps its LowerCtx lc in a Decl, declares, and ends in lc.not_lowered(shape).
// When the kind gets lowered its body switches to the IR helpers of lower.h (which declare the
// same parameters) and its FLOPs come from the ops it emits.
#pragma once
#include "layers/lower.h"

namespace netspec::layers {

class Decl {
 public:
  explicit Decl(LowerCtx& c) : ctx(c), in(c.info.in), net(c.net) {}
  LowerCtx& ctx;
  const Shape& in;
  const NetSpec& net;

  template <typename... A>
  [[noreturn]] void fail(fmt::format_string<A...> f, A&&... a) const {
    ctx.fail(f, std::forward<A>(a)...);
  }
  template <typename... A>
  void check(bool ok, fmt::format_string<A...> f, A&&... a) const {
    ctx.check(ok, f, std::forward<A>(a)...);
  }
  void positive(const char* field, int64_t v, int64_t lo = 1) const { ctx.positive(field, v, lo); }
  Fm image(int64_t c) const { return ctx.image(c); }
  int64_t tokens(int64_t d) const { return ctx.tokens(d); }
  int64_t vec(int64_t d) const { return ctx.vec(d); }
  void channels_match(const char* what, int64_t got, int64_t expected) const {
    ctx.channels_match(what, got, expected);
  }
  std::vector<Shape>& skips() { return ctx.acct->skips; }
  Fm tap(const char* what, int64_t c, int64_t h, int64_t w) const;

  void param(const std::string& leaf, const Shape& shape, ParamInit init, bool decay) {
    ctx.param(leaf, shape, init, decay);
  }
  void add_flops(int64_t f) { ctx.add_flops(f); }
  // conv weight [oc, ic/groups, k, k] (+ bias [oc]); returns the output map (conv_out).
  Fm conv(const std::string& name, Fm x, int64_t oc, int64_t k, int64_t stride = 1,
          int64_t groups = 1, bool bias = false, Padding pad = Padding::same, int64_t dilation = 1);
  void bn(const std::string& name, int64_t c) { ctx.bn(name, c); }
  void ln(const std::string& name, int64_t d, bool bias = true);
  // weight [out, in] (+ bias [out]) applied to `rows` vectors.
  void linear(const std::string& name, int64_t in, int64_t out, bool bias, int64_t rows = 1);
  // "<name>.conv" (no bias) + "<name>.bn".
  Fm conv_bn(const std::string& name, Fm x, int64_t oc, int64_t k, int64_t stride = 1,
             int64_t groups = 1, int64_t dilation = 1);
  // Pre-norm transformer block (timm ViT Block): norm1, attn.qkv, attn.proj, norm2, mlp.fc1/fc2;
  // attention FLOPs q·kᵀ and attn·v, 2·T·T·dim each.
  void vit_block(int64_t tokens, int64_t dim, int64_t heads, int64_t mlp_dim);
};

}  // namespace netspec::layers
