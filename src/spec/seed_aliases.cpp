// The seed's TrainConfig fields read as netspec's (see seed_aliases.h). Meanings are the seed's
// documented ones (shared/seeds/001: TrainConfig, LossKind, OptimizerKind).
#include "spec/seed_aliases.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

namespace netspec {
namespace {

using json = nlohmann::json;

// A JSON value as the notes show it: strings bare, everything else as JSON.
std::string show(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

class Converter {
 public:
  Converter(json& t, SeedImageSize image) : t_(t), image_(image) {}

  std::vector<std::string> run() {
    seed_form_ = is_seed_form();
    renames();
    optimizer();
    schedule();
    init();
    if (seed_form_) seed_units();
    seed_shapes();
    loss_kind();
    return std::move(notes_);
  }

 private:
  bool has(const char* k) const { return t_.contains(k); }

  [[noreturn]] void fail_at(const std::string& key, const std::string& msg) const {
    throw SeedFieldError(key, "[train] " + msg);
  }

  bool take_bool(const char* k) {
    const json& v = t_.at(k);
    if (!v.is_boolean())
      fail_at(k, fmt::format("seed field '{}' has the wrong type (got {}, expected true or false)",
                             k, v.dump()));
    return v.get<bool>();
  }
  double number(const char* k) const {
    const json& v = t_.at(k);
    if (!v.is_number())
      fail_at(k, fmt::format("seed field '{}' has the wrong type (got {}, expected a number)", k,
                             v.dump()));
    return v.get<double>();
  }

  // Sets netspec field `target` from seed field `from`; a target the file also names is a clash.
  void put(const std::string& from, const std::string& target, json value) {
    if (has(target.c_str()) && !produced_.count(target))
      fail_at(from, fmt::format("seed field '{}' and field '{}' both given (give one)", from,
                                target));
    t_[target] = std::move(value);
    produced_.insert(target);
  }
  void note(const std::string& from, const json& was, const std::string& read_as) {
    notes_.push_back(fmt::format("seed field {}={} read as {}", from, show(was), read_as));
  }
  // Seed bool `from` -> netspec bool `to`.
  void rename_bool(const char* from, const char* to) {
    if (!has(from)) return;
    const bool v = take_bool(from);
    t_.erase(from);
    put(from, to, v);
    note(from, v, fmt::format("{}={}", to, v));
  }

  bool is_seed_form() {
    bool seed = false;
    for (const std::string& k : seed_only_field_names()) seed = seed || has(k.c_str());
    if (has("seedConfig")) {
      seed = take_bool("seedConfig") || seed;
      t_.erase("seedConfig");
    }
    return seed;
  }

  void renames() {
    rename_bool("useMixup", "mixup");
    rename_bool("useCutmix", "cutmix");
    rename_bool("useKnnMixup", "knnMixup");
    rename_bool("useRandAugment", "randAugment");
    rename_bool("randAugmentInc", "randAugmentIncreasing");
    rename_bool("useAutoAugment", "autoAugment");
    if (has("valEveryEpochs")) {  // N <= 1: every epoch; the final epoch always
      const json v = t_.at("valEveryEpochs");
      if (!v.is_number_integer() || v.get<int64_t>() < 0)
        fail_at("valEveryEpochs", fmt::format("seed field 'valEveryEpochs' must be an integer "
                                              ">= 0 (got {})", v.dump()));
      const int64_t n = std::max<int64_t>(v.get<int64_t>(), 1);
      t_.erase("valEveryEpochs");
      put("valEveryEpochs", "evalEveryNEpochs", n);
      note("valEveryEpochs", v, fmt::format("evalEveryNEpochs={}", n));
    }
  }

  // useAdam / useMuon / useShampoo; an explicit optimizer other than sgd wins (the seed's rule:
  // the switches are read only while optimizer is left at sgd).
  void optimizer() {
    std::vector<std::pair<std::string, bool>> sw;  // in the seed's precedence
    for (const char* k : {"useShampoo", "useMuon", "useAdam"})
      if (has(k)) sw.emplace_back(k, take_bool(k));
    if (sw.empty()) return;
    for (const auto& s : sw) t_.erase(s.first);
    if (has("optimizer") && t_.at("optimizer") != json("sgd")) {
      for (const auto& [k, v] : sw)
        note(k, v, fmt::format("nothing (optimizer={} given, which the seed reads first)",
                               show(t_.at("optimizer"))));
      return;
    }
    if (has_true(sw, "useShampoo") && has_true(sw, "useMuon"))
      fail_at("useMuon", "seed fields useMuon and useShampoo are both true");
    // The deciding switch: the first true one, else useAdam = false (plain SGD).
    const std::pair<std::string, bool>* decide = nullptr;
    for (const auto& s : sw)
      if (!decide && s.second) decide = &s;
    for (const auto& s : sw)
      if (!decide && s.first == "useAdam") decide = &s;
    for (const auto& s : sw)
      if (&s != decide)
        note(s.first, s.second,
             decide ? fmt::format("nothing (the optimizer comes from {})", decide->first)
                    : std::string("nothing (off)"));
    if (!decide) return;
    const std::string kind = !decide->second                ? "sgd"
                             : decide->first == "useShampoo" ? "shampoo"
                             : decide->first == "useMuon"    ? "muon"
                                                             : "adam";
    if (has("optimizer")) produced_.insert("optimizer");  // "sgd" given: the switch decides
    put(decide->first, "optimizer", kind);
    note(decide->first, decide->second, "optimizer=" + kind);
  }
  static bool has_true(const std::vector<std::pair<std::string, bool>>& sw, const char* k) {
    for (const auto& [name, v] : sw)
      if (name == k && v) return true;
    return false;
  }

  // cosineDecay, and (seed form) expLRDecayRate > 0, which the seed selects over cosine.
  void schedule() {
    std::string chosen;
    const char* from = nullptr;
    if (seed_form_ && has("expLRDecayRate")) {
      const double r = number("expLRDecayRate");
      if (r > 0) {
        chosen = "exponential";
        from = "expLRDecayRate";
        put(from, "schedule", chosen);
        note(from, r, fmt::format("schedule=exponential, expLRDecayRate={}", r));
      } else {
        t_.erase("expLRDecayRate");
        note("expLRDecayRate", r, "nothing (0: no exponential decay)");
      }
    }
    if (!has("cosineDecay")) return;
    const bool cos = take_bool("cosineDecay");
    t_.erase("cosineDecay");
    if (!chosen.empty()) {
      note("cosineDecay", cos, "nothing (expLRDecayRate > 0 selects schedule=exponential)");
      return;
    }
    put("cosineDecay", "schedule", cos ? "cosine" : "constant");
    note("cosineDecay", cos, cos ? "schedule=cosine" : "schedule=constant");
  }

  void init() {
    const bool vit = has("vitInit") && take_bool("vitInit");
    const bool cnx = has("cnxInit") && take_bool("cnxInit");
    if (vit && cnx) fail_at("vitInit", "seed fields vitInit and cnxInit are both true");
    for (const char* k : {"vitInit", "cnxInit"}) {
      if (!has(k)) continue;
      const bool v = t_.at(k).get<bool>();
      t_.erase(k);
      if (!v) {
        note(k, v, "nothing (off)");
        continue;
      }
      const char* kind = std::string(k) == "vitInit" ? "vit" : "convnext";
      put(k, "init", kind);
      note(k, v, fmt::format("init={}", kind));
    }
  }

  // Same names, the seed's units (read only in a seed-form train object).
  void seed_units() {
    if (has("bnMomentum")) {  // TF: weight of the OLD estimate; netspec: of the new batch
      const double m = number("bnMomentum");
      if (!(m >= 0 && m < 1))
        fail_at("bnMomentum", fmt::format("seed field bnMomentum (TF convention, weight of the "
                                          "old estimate) must be in [0, 1) (got {})", m));
      t_["bnMomentum"] = 1 - m;
      note("bnMomentum", m, fmt::format("bnMomentum={} (PyTorch: weight of the new batch)", 1 - m));
    }
    if (has("detPriorPi") && number("detPriorPi") == 0) {  // 0: head biases left at zero
      t_["detPriorPi"] = 0.5;
      note("detPriorPi", 0, "detPriorPi=0.5 (a zero objectness bias: sigmoid 0.5)");
    }
    if (has("testCropRatio") && number("testCropRatio") == 0) {  // 0: the 0.875 default
      t_["testCropRatio"] = 0.875;
      note("testCropRatio", 0, "testCropRatio=0.875 (0: the seed's default ratio)");
    }
    if (has("gradAccumSteps") && number("gradAccumSteps") == 0) {  // N <= 1: one step
      t_["gradAccumSteps"] = 1;
      note("gradAccumSteps", 0, "gradAccumSteps=1");
    }
    if (has("checkpointEveryNEpochs") && number("checkpointEveryNEpochs") == 0)
      fail_at("checkpointEveryNEpochs",
              "seed field checkpointEveryNEpochs=0 (no intermediate snapshots) has no netspec "
              "equivalent: netspec always keeps last.safetensors (give N >= 1)");
  }

  // Same names whose seed form has another JSON shape (read whatever the rest of the object).
  void seed_shapes() {
    if (has("headPriorBias") && t_.at("headPriorBias").is_array()) {
      const json v = t_.at("headPriorBias");
      t_["headPriorBias"] = !v.empty();
      note("headPriorBias", v,
           fmt::format("headPriorBias={} (netspec sets ln(prior) from the training labels' class "
                       "frequencies; the listed values are not used)", !v.empty()));
    }
    if (has("bootstrapBackbone") && t_.at("bootstrapBackbone").is_array()) {
      const json v = t_.at("bootstrapBackbone");
      if (v.size() != 2 || !v[0].is_string() || !v[1].is_number_integer() || v[1].get<int64_t>() < 1)
        fail_at("bootstrapBackbone",
                fmt::format("seed field bootstrapBackbone must be [path, prefixFloats >= 1] (got "
                            "{})", v.dump()));
      const std::string ranges = fmt::format("floats:{}", v[1].get<int64_t>());
      t_["bootstrapBackbone"] = v[0];
      put("bootstrapBackbone", "bootstrapRanges", ranges);
      note("bootstrapBackbone", v,
           fmt::format("bootstrapBackbone={}, bootstrapRanges={} (the layers whose parameters are "
                       "the first {} floats)", show(v[0]), ranges, v[1].get<int64_t>()));
    }
    if (has("bootstrapBackboneRange"))
      fail_at("bootstrapBackboneRange",
              "seed field bootstrapBackboneRange (raw float offsets into a parameter blob) has no "
              "netspec equivalent: give bootstrapBackbone and bootstrapRanges (layer indices)");
    if (has("fpnScales") && t_.at("fpnScales").is_array())
      for (const json& e : t_.at("fpnScales"))
        if (e.is_array())
          fail_at("fpnScales",
                  "seed field fpnScales as (grid, anchors) pairs has no netspec equivalent: give "
                  "fpnScales as level strides and anchors as w,h pairs in pixels");
    anchors();
  }

  // The seed's anchors: [[w_rel, h_rel], ...] relative to the image -> [w_px, h_px, ...].
  void anchors() {
    if (!has("anchors") || !t_.at("anchors").is_array()) return;
    const json v = t_.at("anchors");
    bool pairs = false;
    for (const json& e : v) pairs = pairs || e.is_array();
    if (!pairs) return;  // netspec's flat list in pixels
    if (image_.height <= 0 || image_.width <= 0)
      fail_at("anchors", "seed anchors are relative to the image: they need the net's input "
                         "size (put the train object in the spec file, or give anchors in pixels)");
    json px = json::array();
    for (const json& e : v) {
      if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number())
        fail_at("anchors", fmt::format("seed anchors must be [w, h] pairs (got {})", e.dump()));
      px.push_back(e[0].get<double>() * static_cast<double>(image_.width));
      px.push_back(e[1].get<double>() * static_cast<double>(image_.height));
    }
    t_["anchors"] = px;
    note("anchors", v, fmt::format("anchors={} (pixels of the {}x{} input)", px.dump(),
                                   image_.width, image_.height));
  }

  // The seed derives the loss from the older switches while lossKind is left at classCE:
  // useYolov1 (yoloAnchor with anchors), useSeg, the soft-label augmentations, useFocal.
  void loss_kind() {
    std::vector<std::pair<std::string, std::string>> found;  // (seed field, loss kind)
    for (const char* k : {"useYolov1", "useSeg", "useFocal"}) {
      if (!has(k)) continue;
      const bool v = take_bool(k);
      t_.erase(k);
      if (!v) {
        note(k, v, "nothing (off)");
        continue;
      }
      const std::string name = k;
      const bool anchored = has("anchors") && !t_.at("anchors").empty();
      found.emplace_back(name, name == "useYolov1" ? (anchored ? "yoloAnchor" : "yolov1Masked")
                               : name == "useSeg"  ? "perPixelCE"
                                                   : "focal");
    }
    if (seed_form_)  // the soft-label augmentations, by their seed names when converted
      for (const auto& [k, seed] : {std::pair{"mixup", "useMixup"}, {"cutmix", "useCutmix"},
                                    {"knnMixup", "useKnnMixup"}})
        if (has(k) && t_.at(k) == json(true)) {
          found.emplace_back(produced_.count(k) ? seed : k, "softLabelCE");
          break;
        }
    if (found.empty()) return;
    const bool given = has("lossKind") && !produced_.count("lossKind");
    if (given && t_.at("lossKind") != json("classCE")) {
      for (const auto& [k, kind] : found)
        notes_.push_back(fmt::format("seed field {} derives no loss: lossKind={} given", k,
                                     show(t_.at("lossKind"))));
      return;
    }
    for (size_t i = 1; i < found.size(); ++i)
      if (found[i].second != found[0].second)
        fail_at(found[0].first,
                fmt::format("seed fields {} and {} derive different losses ({} and {}): give "
                            "lossKind", found[0].first, found[i].first, found[0].second,
                            found[i].second));
    if (given) produced_.insert("lossKind");  // classCE given: the seed derives over it
    put(found[0].first, "lossKind", found[0].second);
    notes_.push_back(fmt::format("seed field {}=true read as lossKind={}", found[0].first,
                                 found[0].second));
  }

  json& t_;
  SeedImageSize image_;
  bool seed_form_ = false;
  std::set<std::string> produced_;
  std::vector<std::string> notes_;
};

}  // namespace

const std::vector<std::string>& seed_only_field_names() {
  static const std::vector<std::string> names = {
      "useAdam",        "useMuon",        "useShampoo",     "cosineDecay",    "useFocal",
      "useMixup",       "useCutmix",      "useKnnMixup",    "useRandAugment", "randAugmentInc",
      "useAutoAugment", "valEveryEpochs", "useYolov1",      "useSeg",         "vitInit",
      "cnxInit",        "bootstrapBackboneRange"};
  return names;
}

std::vector<std::string> convert_seed_fields(nlohmann::json& t, SeedImageSize image) {
  if (!t.is_object()) return {};
  return Converter(t, image).run();
}

}  // namespace netspec
