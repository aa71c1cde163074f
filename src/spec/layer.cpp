// Layer kind names and construction by name (the variant's alternative order = layers.def order).
#include "spec/layer.h"

#include <array>

namespace netspec {
namespace {

#define NS_KIND_NAME_(Type, kind) , #kind
constexpr std::array<std::string_view, kNumLayerKinds + 1> kKindNames = {
    "<empty>" NETSPEC_LAYER_LIST(NS_KIND_NAME_)};
#undef NS_KIND_NAME_

template <size_t I>
bool make_at(size_t want, Layer& out) {
  if constexpr (I < std::variant_size_v<Layer>) {
    if (I == want) {
      out.emplace<I>();
      return true;
    }
    return make_at<I + 1>(want, out);
  } else {
    return false;
  }
}

}  // namespace

std::string_view layer_kind(const Layer& l) { return kKindNames[l.index()]; }

std::vector<std::string_view> layer_kind_names() {
  return {kKindNames.begin() + 1, kKindNames.end()};
}

bool make_layer(std::string_view kind, Layer& out) {
  for (size_t i = 1; i < kKindNames.size(); ++i)
    if (kKindNames[i] == kind) return make_at<1>(i, out);
  return false;
}

}  // namespace netspec
