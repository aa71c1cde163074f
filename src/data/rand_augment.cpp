// RandAugment / AutoAugment (see rand_augment.h).
#include "data/rand_augment.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/hash.h"

namespace netspec::data {
namespace {

constexpr uint8_t kFill = 128;

struct PolicyOp {
  const char* name;
  double prob, magnitude;
};

// timm auto_augment_policy_original (the paper's ImageNet policy).
const PolicyOp kImageNet[25][2] = {
    {{"PosterizeOriginal", 0.4, 8}, {"Rotate", 0.6, 9}},
    {{"Solarize", 0.6, 5}, {"AutoContrast", 0.6, 5}},
    {{"Equalize", 0.8, 8}, {"Equalize", 0.6, 3}},
    {{"PosterizeOriginal", 0.6, 7}, {"PosterizeOriginal", 0.6, 6}},
    {{"Equalize", 0.4, 7}, {"Solarize", 0.2, 4}},
    {{"Equalize", 0.4, 4}, {"Rotate", 0.8, 8}},
    {{"Solarize", 0.6, 3}, {"Equalize", 0.6, 7}},
    {{"PosterizeOriginal", 0.8, 5}, {"Equalize", 1.0, 2}},
    {{"Rotate", 0.2, 3}, {"Solarize", 0.6, 8}},
    {{"Equalize", 0.6, 8}, {"PosterizeOriginal", 0.4, 6}},
    {{"Rotate", 0.8, 8}, {"Color", 0.4, 0}},
    {{"Rotate", 0.4, 9}, {"Equalize", 0.6, 2}},
    {{"Equalize", 0.0, 7}, {"Equalize", 0.8, 8}},
    {{"Invert", 0.6, 4}, {"Equalize", 1.0, 8}},
    {{"Color", 0.6, 4}, {"Contrast", 1.0, 8}},
    {{"Rotate", 0.8, 8}, {"Color", 1.0, 2}},
    {{"Color", 0.8, 8}, {"Solarize", 0.8, 7}},
    {{"Sharpness", 0.4, 7}, {"Invert", 0.6, 8}},
    {{"ShearX", 0.6, 5}, {"Equalize", 1.0, 9}},
    {{"Color", 0.4, 0}, {"Equalize", 0.6, 3}},
    {{"Equalize", 0.4, 7}, {"Solarize", 0.2, 4}},
    {{"Solarize", 0.6, 5}, {"AutoContrast", 0.6, 5}},
    {{"Invert", 0.6, 4}, {"Equalize", 1.0, 8}},
    {{"Color", 0.6, 4}, {"Contrast", 1.0, 8}},
    {{"Equalize", 0.8, 8}, {"Equalize", 0.6, 3}},
};

// An op with probability p at magnitude m (noise std s), timm's AugmentOp.__call__ order.
Image8 augment_op(const std::string& name, const Image8& im, double p, double m, double s,
                  AugDraws& d) {
  if (p < 1 && d.uniform() > p) return im;
  if (s > 0) m = d.gauss(m, s);
  return apply_op(name, im, std::clamp(m, 0.0, 10.0), d);
}

}  // namespace

AugDraws sample_draws(uint64_t seed, int64_t epoch, int64_t index) {
  return AugDraws(
      splitmix64(splitmix64(splitmix64(seed ^ 0x7261756775ULL) ^ static_cast<uint64_t>(epoch)) ^
                 static_cast<uint64_t>(index)));
}

int64_t AugDraws::index(int64_t n) {
  const auto v = static_cast<int64_t>(static_cast<double>(splitmix64(key_ + 3 * i_++) >> 11) *
                                      0x1.0p-53 * static_cast<double>(n));
  indices.push_back(v);
  return v;
}

double AugDraws::uniform() {
  const double v = static_cast<double>(splitmix64(key_ + 3 * i_++ + 1) >> 11) * 0x1.0p-53;
  uniforms.push_back(v);
  return v;
}

double AugDraws::gauss(double mean, double std) {
  const uint64_t k = splitmix64(key_ + 3 * i_++ + 2);
  const double u1 = (static_cast<double>(k >> 11) + 1) * 0x1.0p-53;
  const double u2 = static_cast<double>(splitmix64(k) >> 11) * 0x1.0p-53;
  const double v = mean + std * std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  gausses.push_back(v);
  return v;
}

std::vector<std::string> rand_augment_ops(const RandAugmentConfig& c) {
  if (!c.geometric)
    return {"Identity", c.increasing ? "BrightnessIncreasing" : "Brightness",
            c.increasing ? "ContrastIncreasing" : "Contrast",
            c.increasing ? "ColorIncreasing" : "Color", "AutoContrast"};
  if (c.increasing)
    return {"AutoContrast",
            "Equalize",
            "Invert",
            "Rotate",
            "PosterizeIncreasing",
            "SolarizeIncreasing",
            "SolarizeAdd",
            "ColorIncreasing",
            "ContrastIncreasing",
            "BrightnessIncreasing",
            "SharpnessIncreasing",
            "ShearX",
            "ShearY",
            "TranslateXRel",
            "TranslateYRel"};
  return {"AutoContrast", "Equalize",    "Invert", "Rotate",        "Posterize",
          "Solarize",     "SolarizeAdd", "Color",  "Contrast",      "Brightness",
          "Sharpness",    "ShearX",      "ShearY", "TranslateXRel", "TranslateYRel"};
}

Image8 apply_op(const std::string& name, const Image8& im, double m, AugDraws& d) {
  const double lv = m / 10;
  auto neg = [&](double v) { return d.uniform() > 0.5 ? -v : v; };
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  const bool inc = name.size() > 10 && name.find("Increasing") != std::string::npos;
  if (name == "Identity") return im;
  if (name == "AutoContrast") return autocontrast(im);
  if (name == "Equalize") return equalize(im);
  if (name == "Invert") return invert(im);
  if (name == "Rotate") return rotate(im, neg(lv * 30), kFill);
  if (name == "ShearX") return shear_x(im, neg(lv * 0.3), kFill);
  if (name == "ShearY") return shear_y(im, neg(lv * 0.3), kFill);
  if (name == "TranslateXRel")
    return translate_x(im, neg(lv * 0.45) * static_cast<double>(im.w), kFill);
  if (name == "TranslateYRel")
    return translate_y(im, neg(lv * 0.45) * static_cast<double>(im.h), kFill);
  if (starts("Posterize")) {
    int bits = static_cast<int>(lv * 4);
    if (inc) bits = 4 - bits;
    if (name == "PosterizeOriginal") bits += 4;
    return bits >= 8 ? im : posterize(im, bits);
  }
  if (name == "SolarizeAdd") return solarize_add(im, std::min(128, static_cast<int>(lv * 110)));
  if (starts("Solarize")) {
    int t = std::min(256, static_cast<int>(lv * 256));
    return solarize(im, inc ? 256 - t : t);
  }
  const double f = inc ? std::max(0.1, 1.0 + neg(lv * 0.9)) : lv * 1.8 + 0.1;
  if (starts("Color")) return color(im, f);
  if (starts("Contrast")) return contrast(im, f);
  if (starts("Brightness")) return brightness(im, f);
  if (starts("Sharpness")) return sharpness(im, f);
  fail("randAugment", "unknown op '{}'", name);
}

Image8 rand_augment(const Image8& im, const RandAugmentConfig& c, AugDraws& d) {
  const std::vector<std::string> ops = rand_augment_ops(c);
  std::vector<int64_t> pick;
  for (int k = 0; k < c.n; ++k) pick.push_back(d.index(static_cast<int64_t>(ops.size())));
  Image8 out = im;
  for (int64_t k : pick) out = augment_op(ops[k], out, c.prob, c.m, c.mstd, d);
  return out;
}

Image8 auto_augment_imagenet(const Image8& im, AugDraws& d) {
  const auto& sub = kImageNet[d.index(25)];
  Image8 out = im;
  for (const PolicyOp& op : sub) out = augment_op(op.name, out, op.prob, op.magnitude, 0, d);
  return out;
}

}  // namespace netspec::data
