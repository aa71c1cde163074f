// Spec vocabulary enums (activation, norm, padding, losses, optimizers, datasets, init rules)
// with one name table each. Enumerator spelling == the name used in spec files and on the CLI,
// so `enum_name(Activation::hSwish) == "hSwish"` and parse_enum<Activation>("hSwish") inverts it.
// NETSPEC_ENUM generates the enum and its EnumTraits (type name + names in declaration order).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace netspec {

template <class E>
struct EnumTraits;

#define NS_ENUM_ID_(x) x,
#define NS_ENUM_STR_(x) #x,
#define NETSPEC_ENUM(Name, LIST)                                    \
  enum class Name { LIST(NS_ENUM_ID_) };                            \
  template <>                                                       \
  struct EnumTraits<Name> {                                         \
    static constexpr std::string_view kType = #Name;                \
    static constexpr std::string_view kNames[] = {LIST(NS_ENUM_STR_)}; \
  };

// swish = SiLU x·σ(x); hSwish = x·relu6(x+3)/6; gelu uses the tanh approximation.
#define NETSPEC_ACTIVATIONS(X) X(relu) X(relu6) X(identity) X(swish) X(hSwish) X(gelu) X(geluTanh)
NETSPEC_ENUM(Activation, NETSPEC_ACTIVATIONS)
// gn = GroupNorm (groups from the kind's normGroups field; only kinds that say so accept it).
#define NETSPEC_NORMS(X) X(bn) X(ln) X(gn)
NETSPEC_ENUM(Norm, NETSPEC_NORMS)
#define NETSPEC_PADDINGS(X) X(same) X(valid)
NETSPEC_ENUM(Padding, NETSPEC_PADDINGS)
// Strided `same`: xlaSame puts the extra row on the high side (TF/XLA); symmetric pads (k-1)/2
// on both sides (torchvision). Output sizes agree for odd k; the padded values differ.
#define NETSPEC_PAD_STYLES(X) X(xlaSame) X(symmetric)
NETSPEC_ENUM(PadStyle, NETSPEC_PAD_STYLES)
// focal: classCE weighted by (1-p)^focalGamma per class term (Lin et al. 2017), class-index labels.
#define NETSPEC_LOSS_KINDS(X)                                                              \
  X(classCE) X(softLabelCE) X(perPixelCE) X(perPixelDice) X(perPixelDiceCE)                \
  X(perPixelWeightedCE) X(perPixelFocalCE) X(floatTargetMse) X(yolov1Masked) X(yoloAnchor) \
  X(bce) X(tokenCE) X(focal) X(detrSet) X(nerfRenderMse) X(af2Fold)
NETSPEC_ENUM(LossKind, NETSPEC_LOSS_KINDS)
// adam becomes AdamW (decoupled decay) when weightDecay > 0.
#define NETSPEC_OPTIMIZERS(X) X(sgd) X(adam) X(rmsprop) X(lamb) X(muon) X(shampoo)
NETSPEC_ENUM(OptimizerKind, NETSPEC_OPTIMIZERS)
// plateau: constant, lowered by the monitor (ReduceLROnPlateau; train/checkpoint_policy.h).
#define NETSPEC_SCHEDULES(X) X(constant) X(cosine) X(exponential) X(plateau)
NETSPEC_ENUM(Schedule, NETSPEC_SCHEDULES)
#define NETSPEC_DATASETS(X)                                                                    \
  X(mnist)                                                                                     \
  X(fashionMnist) X(cifar10) X(imagenette) X(pets) X(petsDet) X(brats) X(brats224) X(imagenet) \
      X(text) X(folder) X(csv) X(voc) X(coco) X(radianceField) X(protein) X(packed)
NETSPEC_ENUM(DatasetKind, NETSPEC_DATASETS)
// Network-wide init family: he (kaiming fan_out convs, PyTorch-default linears), vit (trunc
// normal 0.02 linears/tokens, zero biases), convnext (trunc normal 0.02 convs and linears).
// DDPM β_t: linear (Ho et al.) or cosine (Nichol & Dhariwal 2021, ᾱ from a squared cosine).
#define NETSPEC_BETA_SCHEDULES(X) X(linear) X(cosine)
NETSPEC_ENUM(BetaSchedule, NETSPEC_BETA_SCHEDULES)
#define NETSPEC_INIT_KINDS(X) X(he) X(vit) X(convnext)
NETSPEC_ENUM(InitKind, NETSPEC_INIT_KINDS)
// Per-parameter init rule recorded in the ParamTable; the trainer maps it to a distribution
// using the net's InitKind. convWeight/linearWeight read fan-in/out from the shape.
#define NETSPEC_PARAM_INITS(X)                                                               \
  X(convWeight) X(linearWeight) X(zeros) X(ones) X(embedding) X(posEmbed) X(classToken)      \
  X(layerScale) X(ssmALog) X(ssmD) X(ssmDtBias) X(relPosBias)
NETSPEC_ENUM(ParamInit, NETSPEC_PARAM_INITS)

template <class E>
constexpr std::string_view enum_name(E e) {
  return EnumTraits<E>::kNames[static_cast<int>(e)];
}

template <class E>
std::optional<E> parse_enum(std::string_view s) {
  int i = 0;
  for (std::string_view n : EnumTraits<E>::kNames) {
    if (n == s) return static_cast<E>(i);
    ++i;
  }
  return std::nullopt;
}

// "relu, relu6, identity, ..." for error messages.
template <class E>
std::string enum_choices() {
  std::string out;
  for (std::string_view n : EnumTraits<E>::kNames) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace netspec
