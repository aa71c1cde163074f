// Prior-bias init of detector and classifier heads (prior_bias.h).
#include "tasks/prior_bias.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "layers/lower.h"

namespace netspec::train {
namespace {

int64_t find_param(const ParamTable& t, const std::string& name) {
  for (size_t i = 0; i < t.params.size(); ++i)
    if (t.params[i].name == name) return int64_t(i);
  return -1;
}

}  // namespace

std::vector<double> class_priors(const data::Dataset& train, int64_t classes) {
  std::vector<double> n(classes, 0.0);
  double total = 0;
  const Tensor& y = train.y;
  if (y.dtype() == DType::kI32 && y.shape().size() == 1) {
    for (int64_t i = 0; i < y.numel(); ++i) {
      const int32_t c = y.data<int32_t>()[i];
      if (c >= 0 && c < classes) n[c] += 1, total += 1;
    }
  } else if (y.dtype() == DType::kF32 && y.shape().size() == 3 && y.shape()[2] == 6) {
    const float* p = y.data<float>();
    for (int64_t r = 0; r < y.numel() / 6; ++r)
      if (p[r * 6] > 0) {
        const int64_t c = std::llround(p[r * 6 + 5]);
        if (c >= 0 && c < classes) n[c] += 1, total += 1;
      }
  } else {
    fail("headPriorBias",
         "needs class-index labels i32 [N] or detector rows f32 [N, R, 6] (got {})", y.type_str());
  }
  if (total == 0) fail("headPriorBias", "the training labels hold no class");
  for (double& v : n) v = std::max(v / total, 1e-6);
  return n;
}

std::string apply_prior_bias(const NetSpec& net, const ParamTable& t, const TrainConfig& c,
                             const data::Dataset& train, std::vector<Tensor>& params) {
  std::string said;
  int head = -1;
  for (size_t i = 0; i < net.layers.size(); ++i)
    if (layers::traits(net.layers[i]).detector) head = int(i);
  if (head >= 0) {
    const auto [a, oc] = layers::traits(net.layers[head]).detector(net.layers[head]);
    const int64_t k = find_param(t, fmt::format("layers.{}.pred.bias", head));
    if (k < 0) fail("detPriorPi", "detector layer {} has no pred.bias", head);
    float* b = params[k].data<float>();
    const double pi = c.detPriorPi;
    for (int64_t q = 0; q < a; ++q) b[q * oc + 4] = float(-std::log((1 - pi) / pi));
    said += fmt::format("detPriorPi {}: objectness bias {:.4f}", pi, -std::log((1 - pi) / pi));
    if (c.headPriorBias) {
      if (c.lossKind != LossKind::yoloAnchor)
        fail("headPriorBias", "a detector head needs lossKind yoloAnchor (got {})",
             enum_name(c.lossKind));
      const std::vector<double> pr = class_priors(train, oc - 5);
      for (int64_t q = 0; q < a; ++q)
        for (int64_t cl = 0; cl < oc - 5; ++cl) b[q * oc + 5 + cl] = float(std::log(pr[cl]));
      said += "; headPriorBias: class biases ln(prior)";
    }
    return said;
  }
  if (!c.headPriorBias) return said;
  if (t.output.size() != 1 || (c.lossKind != LossKind::classCE && c.lossKind != LossKind::focal))
    fail("headPriorBias",
         "needs a classifier with logits [K] and lossKind classCE or focal "
         "(got logits {}, {})",
         shape_str(t.output), enum_name(c.lossKind));
  const int64_t classes = t.output[0];
  for (int64_t i = int64_t(t.params.size()) - 1; i >= 0; --i) {
    const ParamDesc& p = t.params[i];
    if (p.shape == Shape{classes} && p.name.ends_with(".bias")) {
      const std::vector<double> pr = class_priors(train, classes);
      for (int64_t cl = 0; cl < classes; ++cl)
        params[i].data<float>()[cl] = float(std::log(pr[cl]));
      return fmt::format("headPriorBias: {} = ln(class prior)", p.name);
    }
  }
  fail("headPriorBias", "no classifier bias [{}] in {}", classes, net.name);
}

}  // namespace netspec::train
