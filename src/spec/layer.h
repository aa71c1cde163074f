// Layer kinds and NetSpec: one aggregate struct per kind (generated from spec/layers.def), a
// Layer variant over all of them, and the network-level NetSpec plus a small C++ builder.
// Member names are camelCase on purpose: they are the spec-file field names, one to one.
// Each struct has visit(v) calling v("field", member, required) in file order (JSON I/O, docs).
#pragma once
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "spec/enums.h"
#include "spec/layers.def"

namespace netspec {

#define NS_DECL_R_(T, n) T n{};
#define NS_DECL_O_(T, n, d) T n = d;
#define NS_VISIT_R_(T, n) v(#n, n, true);
#define NS_VISIT_O_(T, n, d) v(#n, n, false);
#define NS_LAYER_STRUCT_(Type, kind)                          \
  struct Type {                                               \
    static constexpr std::string_view kKind = #kind;          \
    NETSPEC_FIELDS_##kind(NS_DECL_R_, NS_DECL_O_)             \
    template <class V>                                        \
    void visit(V&& v) {                                       \
      NETSPEC_FIELDS_##kind(NS_VISIT_R_, NS_VISIT_O_)(void) v; \
    }                                                         \
    template <class V>                                        \
    void visit(V&& v) const {                                 \
      NETSPEC_FIELDS_##kind(NS_VISIT_R_, NS_VISIT_O_)(void) v; \
    }                                                         \
    bool operator==(const Type&) const = default;             \
  };
NETSPEC_LAYER_LIST(NS_LAYER_STRUCT_)
#undef NS_LAYER_STRUCT_

#define NS_LAYER_ALT_(Type, kind) , Type
// Alternative 0 (monostate) is the empty layer a default-constructed Layer holds; never valid.
using Layer = std::variant<std::monostate NETSPEC_LAYER_LIST(NS_LAYER_ALT_)>;
#undef NS_LAYER_ALT_

// Number of real layer kinds (alternative 0 is the empty placeholder).
inline constexpr size_t kNumLayerKinds = std::variant_size_v<Layer> - 1;

// "conv2d", "residualBlock", ... ("<empty>" for the placeholder).
std::string_view layer_kind(const Layer& l);
// All kind names in declaration order.
std::vector<std::string_view> layer_kind_names();
// A default-constructed layer of the named kind; false if the name is unknown.
bool make_layer(std::string_view kind, Layer& out);

struct NetSpec {
  std::string name;
  std::vector<Layer> layers;
  // Per-sample input: [C, H, W]; H == W == 0 means a vector/sequence input [C] (e.g. token ids).
  int inputChannels = 3;
  int inputHeight = 224;
  int inputWidth = 224;
  int detStride = 0;                         // detection grid stride in pixels (0: not a detector)
  std::string buildTag;                      // namespaces a run's artifacts (build/<name>-<tag>)
  Activation convBnAct = Activation::relu;   // activation after every convBn-style conv+BN
  PadStyle convPadStyle = PadStyle::xlaSame;  // where the extra row goes for a strided `same`
  double bnEps = 1e-5;  // BN epsilon for every BN of the net (PyTorch 1e-5; EfficientNet/MNv3 1e-3)
  double lnEps = 1e-5;  // LayerNorm epsilon (nn.LayerNorm 1e-5; ViT and ConvNeXt 1e-6)
  bool operator==(const NetSpec&) const = default;

  template <class V>
  void visit_scalars(V&& v) {
    visit_scalars_impl(*this, v);
  }
  template <class V>
  void visit_scalars(V&& v) const {
    visit_scalars_impl(*this, v);
  }

 private:
  template <class Self, class V>
  static void visit_scalars_impl(Self& s, V& v) {
    v("name", s.name, true);
    v("inputChannels", s.inputChannels, true);
    v("inputHeight", s.inputHeight, false);
    v("inputWidth", s.inputWidth, false);
    v("detStride", s.detStride, false);
    v("buildTag", s.buildTag, false);
    v("convBnAct", s.convBnAct, false);
    v("convPadStyle", s.convPadStyle, false);
    v("bnEps", s.bnEps, false);
    v("lnEps", s.lnEps, false);
  }
};

// Builder: NetBuilder("mlp").input(1, 28, 28).add(Flatten{}).add(Dense{.in = 784, .out = 10})
//   .build();  build() runs no checks; call build_param_table() to validate.
class NetBuilder {
 public:
  explicit NetBuilder(std::string name) { net_.name = std::move(name); }
  NetBuilder& input(int c, int h = 0, int w = 0) {
    net_.inputChannels = c;
    net_.inputHeight = h;
    net_.inputWidth = w;
    return *this;
  }
  NetBuilder& conv_bn_act(Activation a) {
    net_.convBnAct = a;
    return *this;
  }
  NetBuilder& pad_style(PadStyle p) {
    net_.convPadStyle = p;
    return *this;
  }
  NetBuilder& bn_eps(double e) {
    net_.bnEps = e;
    return *this;
  }
  NetBuilder& ln_eps(double e) {
    net_.lnEps = e;
    return *this;
  }
  NetBuilder& det_stride(int s) {
    net_.detStride = s;
    return *this;
  }
  NetBuilder& build_tag(std::string t) {
    net_.buildTag = std::move(t);
    return *this;
  }
  template <class L>
  NetBuilder& add(L layer) {
    net_.layers.emplace_back(std::move(layer));
    return *this;
  }
  NetSpec build() const { return net_; }

 private:
  NetSpec net_;
};

}  // namespace netspec
