// ParamTable construction: walks the layers, dispatches each to its kind's rule
// (src/spec/layers/*.cpp) and records shapes, params, BN layers and FLOPs.
#include "spec/param_table.h"

#include "spec/layers/account.h"

namespace netspec {
namespace acct {

Ctx::Ctx(const NetSpec& n, int i, std::string_view k, Shape input,
         const std::vector<Shape>& hist, std::vector<Shape>& sk, ParamTable& table,
         LayerInfo& info)
    : net(n), index(i), kind(k), in(std::move(input)), history(hist), skips(sk),
      table_(table), info_(info) {}

void Ctx::positive(const char* field, int64_t v, int64_t lo) const {
  if (v < lo) fail("{} must be >= {} (got {})", field, lo, v);
}

Fm Ctx::image(int64_t c) const {
  if (in.size() != 3)
    fail("expects an image [C, H, W] input (got [{}])", fmt::join(in, ", "));
  if (c >= 0 && in[0] != c) fail("input channels (got {}, expected {})", in[0], c);
  return {in[0], in[1], in[2]};
}

int64_t Ctx::tokens(int64_t d) const {
  if (in.size() != 2)
    fail("expects a token sequence [T, D] input (got [{}])", fmt::join(in, ", "));
  if (d >= 0 && in[1] != d) fail("input feature dim (got {}, expected {})", in[1], d);
  return in[0];
}

int64_t Ctx::vec(int64_t d) const {
  if (in.size() != 1) fail("expects a vector [D] input (got [{}])", fmt::join(in, ", "));
  if (d >= 0 && in[0] != d) fail("input features (got {}, expected {})", in[0], d);
  return d;
}

void Ctx::channels_match(const char* what, int64_t got, int64_t expected) const {
  if (got != expected) fail("{} (got {}, expected {})", what, got, expected);
}

// "a" + "weight" -> "a.weight"; "" + "weight" -> "weight".
static std::string dot(const std::string& a, const char* b) { return a.empty() ? b : a + "." + b; }

std::string Ctx::full(const std::string& leaf) const {
  std::string s = fmt::format("layers.{}", index);
  for (const auto& p : scope_) s += "." + p;
  if (!leaf.empty()) s += "." + leaf;
  return s;
}

void Ctx::param(const std::string& leaf, Shape shape, ParamInit init, bool decay) {
  for (int64_t d : shape)
    if (d <= 0) fail("parameter {} has a non-positive dim ([{}])", full(leaf), fmt::join(shape, ", "));
  ParamDesc p{full(leaf), std::move(shape), init, decay, index};
  info_.params += p.numel();
  ++info_.num_params;
  table_.params.push_back(std::move(p));
}

Fm Ctx::conv(const std::string& name, Fm x, int64_t oc, int64_t k, int64_t stride,
             int64_t groups, bool bias, Padding pad, int64_t dilation) {
  if (x.c % groups != 0 || oc % groups != 0)
    fail("{}: groups {} do not divide channels {} -> {}", full(name), groups, x.c, oc);
  Fm y{oc, conv_out(x.h, k, stride, pad, dilation), conv_out(x.w, k, stride, pad, dilation)};
  if (y.h <= 0 || y.w <= 0)
    fail("{}: spatial size goes to zero ({}x{} with kernel {} stride {})", full(name), x.h, x.w,
         k, stride);
  param(dot(name, "weight"), {oc, x.c / groups, k, k}, ParamInit::convWeight, true);
  if (bias) param(dot(name, "bias"), {oc}, ParamInit::zeros, false);
  info_.flops += 2 * y.h * y.w * oc * (x.c / groups) * k * k;
  return y;
}

void Ctx::bn(const std::string& name, int64_t c) {
  param(dot(name, "weight"), {c}, ParamInit::ones, false);
  param(dot(name, "bias"), {c}, ParamInit::zeros, false);
  table_.bns.push_back({full(name), c, index});
  ++info_.num_bn;
}

void Ctx::ln(const std::string& name, int64_t d, bool bias) {
  param(dot(name, "weight"), {d}, ParamInit::ones, false);
  if (bias) param(dot(name, "bias"), {d}, ParamInit::zeros, false);
}

void Ctx::linear(const std::string& name, int64_t in_f, int64_t out_f, bool bias, int64_t rows) {
  param(dot(name, "weight"), {out_f, in_f}, ParamInit::linearWeight, true);
  if (bias) param(dot(name, "bias"), {out_f}, ParamInit::zeros, false);
  info_.flops += 2 * rows * in_f * out_f;
}

Fm Ctx::conv_bn(const std::string& name, Fm x, int64_t oc, int64_t k, int64_t stride,
                int64_t groups, int64_t dilation) {
  Fm y = conv(dot(name, "conv"), x, oc, k, stride, groups, false, Padding::same, dilation);
  bn(dot(name, "bn"), oc);
  return y;
}

Fm Ctx::tap(const char* what, int64_t c, int64_t h, int64_t w) const {
  for (int i = index; i >= 0; --i) {
    const Shape& s = history[i];
    if (s.size() == 3 && s[0] == c && s[1] == h && s[2] == w) return {c, h, w};
  }
  fail("no earlier output for {} with {} channels at {}x{}", what, c, h, w);
}

void vit_block(Ctx& c, int64_t t, int64_t dim, int64_t heads, int64_t mlp_dim) {
  c.check(dim % heads == 0, "heads {} do not divide dim {}", heads, dim);
  c.ln("norm1", dim);
  c.linear("attn.qkv", dim, 3 * dim, true, t);
  c.add_flops(2 * 2 * t * t * dim);  // q·kᵀ and attn·v
  c.linear("attn.proj", dim, dim, true, t);
  c.ln("norm2", dim);
  c.linear("mlp.fc1", dim, mlp_dim, true, t);
  c.linear("mlp.fc2", mlp_dim, dim, true, t);
}

void squeeze_excite(Ctx& c, const std::string& name, Fm x, int64_t squeeze) {
  Fm p{x.c, 1, 1};
  Fm s = c.conv(name + ".fc1", p, squeeze, 1, 1, 1, true);
  c.conv(name + ".fc2", s, x.c, 1, 1, 1, true);
}

}  // namespace acct

int64_t ParamTable::total_params() const {
  int64_t n = 0;
  for (const auto& p : params) n += p.numel();
  return n;
}

int64_t ParamTable::total_flops() const {
  int64_t n = 0;
  for (const auto& l : layers) n += l.flops;
  return n;
}

ParamTable build_param_table(const NetSpec& net) {
  ParamTable t;
  if (net.layers.empty()) fail("net " + net.name, "has no layers");
  if (net.inputChannels <= 0 || net.inputHeight < 0 || net.inputWidth < 0 ||
      (net.inputHeight == 0) != (net.inputWidth == 0))
    fail("net " + net.name, "bad input shape (got {}x{}x{}, expected C > 0 and H, W both > 0 "
         "or both 0)", net.inputChannels, net.inputHeight, net.inputWidth);
  t.input = net.inputHeight > 0 ? Shape{net.inputChannels, net.inputHeight, net.inputWidth}
                                 : Shape{net.inputChannels};
  std::vector<Shape> history{t.input};
  std::vector<Shape> skips;
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const Layer& layer = net.layers[i];
    LayerInfo info;
    info.index = static_cast<int>(i);
    info.kind = std::string(layer_kind(layer));
    info.in = history.back();
    info.first_param = static_cast<int>(t.params.size());
    info.first_bn = static_cast<int>(t.bns.size());
    acct::Ctx ctx(net, info.index, info.kind, info.in, history, skips, t, info);
    std::visit(
        [&](const auto& l) {
          if constexpr (std::is_same_v<std::decay_t<decltype(l)>, std::monostate>)
            ctx.fail("empty layer");
          else
            acct::account(l, ctx);
        },
        layer);
    if (ctx.out.empty()) ctx.fail("internal: rule set no output shape");
    for (int64_t d : ctx.out)
      if (d <= 0) ctx.fail("output shape has a non-positive dim ([{}])", fmt::join(ctx.out, ", "));
    info.out = ctx.out;
    history.push_back(info.out);
    t.layers.push_back(std::move(info));
  }
  t.output = history.back();
  return t;
}

namespace {
// Pointer to the class-count field of a layer, or nullptr.
int* class_field(Layer& l) {
  if (auto* d = std::get_if<Dense>(&l)) return &d->out;
  if (auto* c = std::get_if<Conv2d>(&l)) return &c->oc;
  if (auto* h = std::get_if<DetrHeads>(&l)) return &h->nClasses;
  return nullptr;
}
}  // namespace

void set_num_classes(NetSpec& net, int classes) {
  if (classes < 1) fail("classes", "must be >= 1 (got {})", classes);
  for (auto it = net.layers.rbegin(); it != net.layers.rend(); ++it)
    if (int* f = class_field(*it)) {
      *f = classes;
      return;
    }
  fail("net " + net.name, "has no classifier layer (dense, conv2d or detrHeads) to resize");
}

int num_classes(const NetSpec& net) {
  NetSpec copy = net;
  for (auto it = copy.layers.rbegin(); it != copy.layers.rend(); ++it)
    if (int* f = class_field(*it)) return *f;
  return -1;
}

}  // namespace netspec
