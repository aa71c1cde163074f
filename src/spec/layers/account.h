// Internal: the accounting context each layer kind's rule works in (src/spec/layers/*.cpp).
// A rule reads its input shape, checks its fields against it (ctx.fail / ctx.check name the
// layer), emits parameters through the helpers below in PyTorch module order, and sets ctx.out.
// Helpers: conv / bn / ln / linear add params and FLOPs (2 per multiply-accumulate).
#pragma once
#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "spec/param_table.h"

namespace netspec::acct {

// A feature map [c, h, w] (per sample).
struct Fm {
  int64_t c, h, w;
  Shape shape() const { return {c, h, w}; }
};

class Ctx {
 public:
  Ctx(const NetSpec& net, int index, std::string_view kind, Shape in,
      const std::vector<Shape>& history, std::vector<Shape>& skips, ParamTable& table,
      LayerInfo& info);

  const NetSpec& net;
  const int index;
  const std::string_view kind;
  const Shape in;
  Shape out;
  const std::vector<Shape>& history;  // [0] = net input, [i + 1] = output of layer i
  std::vector<Shape>& skips;          // U-Net skip stack (unetDown pushes, unetUp pops)

  std::string where() const { return fmt::format("layer {} {}", index, kind); }
  template <typename... A>
  [[noreturn]] void fail(fmt::format_string<A...> f, A&&... a) const {
    netspec::fail(where(), f, std::forward<A>(a)...);
  }
  template <typename... A>
  void check(bool ok, fmt::format_string<A...> f, A&&... a) const {
    if (!ok) fail(f, std::forward<A>(a)...);
  }
  // Field must be >= lo: "ic must be >= 1 (got 0)".
  void positive(const char* field, int64_t v, int64_t lo = 1) const;
  // Input must be an image with `c` channels (c < 0: any); returns it.
  Fm image(int64_t c) const;
  // Input must be a token sequence [T, d] (d < 0: any); returns T.
  int64_t tokens(int64_t d) const;
  // Input must be a vector [d]; returns d.
  int64_t vec(int64_t d) const;
  void channels_match(const char* what, int64_t got, int64_t expected) const;

  // Naming: names are "layers.<index>.<scope...>.<leaf>".
  void push(std::string s) { scope_.push_back(std::move(s)); }
  void pop() { scope_.pop_back(); }
  std::string full(const std::string& leaf) const;

  void param(const std::string& leaf, Shape shape, ParamInit init, bool decay);
  // conv weight [oc, ic/groups, k, k] (+ bias [oc]); returns the output map. `same` keeps
  // ceil(h / s); `valid` gives (h - k) / s + 1 (dilated kernels use k_eff = d (k - 1) + 1).
  Fm conv(const std::string& name, Fm x, int64_t oc, int64_t k, int64_t stride = 1,
          int64_t groups = 1, bool bias = false, Padding pad = Padding::same,
          int64_t dilation = 1);
  void bn(const std::string& name, int64_t c);
  void ln(const std::string& name, int64_t d, bool bias = true);
  // weight [out, in] (+ bias [out]) applied to `rows` vectors.
  void linear(const std::string& name, int64_t in, int64_t out, bool bias, int64_t rows = 1);
  // conv (no bias) + BN, the torchvision Conv2dNormActivation / BasicConv2d unit.
  Fm conv_bn(const std::string& name, Fm x, int64_t oc, int64_t k, int64_t stride = 1,
             int64_t groups = 1, int64_t dilation = 1);
  void add_flops(int64_t f) { info_.flops += f; }

  // Finds the latest earlier output (before this layer) that is an image with `c` channels and
  // spatial size (h, w); fails with `what` if none.
  Fm tap(const char* what, int64_t c, int64_t h, int64_t w) const;

 private:
  ParamTable& table_;
  LayerInfo& info_;
  std::vector<std::string> scope_;
};

// RAII name scope.
class Scope {
 public:
  Scope(Ctx& c, std::string s) : c_(c) { c_.push(std::move(s)); }
  ~Scope() { c_.pop(); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Ctx& c_;
};

inline int64_t conv_out(int64_t h, int64_t k, int64_t s, Padding p, int64_t d = 1) {
  int64_t ke = d * (k - 1) + 1;
  return p == Padding::same ? (h + s - 1) / s : (h - ke) / s + 1;
}

// torchvision/timm _make_divisible: round to a multiple of `d`, never below 90 % of v.
// Pooling output size; ceilMode (valid padding only) is PyTorch's ceil_mode:
// ceil((h - k) / s) + 1, minus one when the last window would start past the input.
inline int64_t pool_out(int64_t h, int64_t k, int64_t s, Padding p, bool ceil_mode) {
  if (!ceil_mode) return conv_out(h, k, s, p);
  if (h < k) return 0;
  int64_t out = (h - k + s - 1) / s + 1;
  if ((out - 1) * s >= h) --out;
  return out;
}

inline int64_t make_divisible(double v, int64_t d = 8) {
  int64_t nv = std::max<int64_t>(d, static_cast<int64_t>(v + d / 2.0) / d * d);
  if (nv < 0.9 * v) nv += d;
  return nv;
}

// One rule per layer kind; the compiler refuses a kind without one.
#define NS_ACCOUNT_DECL_(Type, kind) void account(const Type& l, Ctx& c);
NETSPEC_LAYER_LIST(NS_ACCOUNT_DECL_)
#undef NS_ACCOUNT_DECL_

// Shared sub-blocks used by several families.
// Pre-norm transformer block (timm ViT Block): norm1, attn.qkv, attn.proj, norm2, mlp.fc1/fc2.
void vit_block(Ctx& c, int64_t tokens, int64_t dim, int64_t heads, int64_t mlp_dim);
// Squeeze-excitation with 1x1 convs and biases (torchvision SqueezeExcitation): fc1, fc2.
void squeeze_excite(Ctx& c, const std::string& name, Fm x, int64_t squeeze);

}  // namespace netspec::acct
