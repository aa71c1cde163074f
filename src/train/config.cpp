// --config / --set / help for TrainConfig (see config.h).
#include "train/config.h"

#include <fmt/format.h>

#include <cctype>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/file_check.h"
#include "core/nearest_name.h"
#include "data/dataset_registry.h"
#include "data/datasets.h"
#include "spec/seed_aliases.h"
#include "spec/spec_json.h"
#include "train/trainer.h"

namespace netspec::train {
namespace {

// Copies the field called `name` from src to dst (same type by construction).
void copy_field(TrainConfig& dst, const TrainConfig& src, const std::string& name) {
  dst.visit([&](const char* n, auto& f, const char*) {
    if (name != n) return;
    using F = std::decay_t<decltype(f)>;
    src.visit([&](const char* n2, const auto& g, const char*) {
      if constexpr (std::is_same_v<std::decay_t<decltype(g)>, F>)
        if (name == n2) f = g;
    });
  });
}

}  // namespace

template <class T>
std::string field_str(const T& v) {
  if constexpr (std::is_same_v<T, bool>)
    return v ? "true" : "false";
  else if constexpr (std::is_same_v<T, std::string>)
    return "\"" + v + "\"";
  else if constexpr (std::is_same_v<T, DoubleList>)
    return fmt::format("[{}]", fmt::join(v, ", "));
  else if constexpr (std::is_enum_v<T>)
    return std::string(enum_name(v));
  else
    return fmt::format("{}", v);
}

void apply_config_text(TrainConfig& c, std::string_view text, const std::string& label) {
  // Parsed as the "train" object of a spec so the spec reader checks names, types and enums;
  // the prefix sits on line 1, so columns there are shifted back. Input size 0: no net, so the
  // seed's image-relative anchors are refused here.
  const std::string prefix =
      "{\"name\": \"c\", \"inputChannels\": 1, \"inputHeight\": 0, \"inputWidth\": 0, "
      "\"layers\": [], \"train\": ";
  std::string wrapped = prefix + std::string(text) + "\n}";
  SpecFile sf;
  std::vector<std::string> notes;  // the seed's field names, converted (seed_aliases.h)
  try {
    sf = parse_spec(wrapped, label, &notes);
  } catch (const ParseError& e) {
    Location loc = e.location();
    if (loc.line == 1) loc.col = std::max(1, loc.col - static_cast<int>(prefix.size()));
    throw ParseError(label, loc, e.bare_message());
  }
  if (!sf.train) fail("config", "{}: expected a JSON object of TrainConfig fields", label);
  for (const std::string& n : notes) std::cerr << label << ": " << n << "\n";
  auto j = nlohmann::json::parse(text);  // valid: parse_spec accepted it
  convert_seed_fields(j, {});            // the netspec keys the seed's became (accepted above)
  for (auto it = j.begin(); it != j.end(); ++it) copy_field(c, *sf.train, it.key());
}

void apply_config_file(TrainConfig& c, const std::string& path) {
  apply_config_text(c, read_regular_file("config", path), path);  // a FIFO never blocks
}

std::string set_field_alias(const std::string& name) {
  // Short names every optimizer tool uses; each names one field only.
  static const std::map<std::string, std::string> aliases = {
      {"lr", "learningRate"}, {"bs", "batchSize"}, {"wd", "weightDecay"}};
  const auto it = aliases.find(name);
  return it == aliases.end() ? name : it->second;
}

void apply_set(TrainConfig& c, const std::string& a) {
  auto eq = a.find('=');
  if (eq == std::string::npos || eq == 0) fail("config", "--set expects field=value (got '{}')", a);
  std::string name = set_field_alias(a.substr(0, eq)), value = a.substr(eq + 1);
  bool known = false;
  std::vector<std::string> names;
  c.visit([&](const char* n, const auto&, const char*) {
    known |= name == n;
    names.push_back(n);
  });
  if (!known)
    fail("config", "--set {}: unknown TrainConfig field '{}'{} (expected one of {})", a, name,
         did_you_mean(name, names), fmt::join(names, ", "));
  if (!nlohmann::json::accept(value)) value = nlohmann::json(value).dump();  // a bare string
  try {
    apply_config_text(c, fmt::format("{{\"{}\": {}}}", name, value), "--set");
  } catch (const ParseError& e) {
    fail("config", "--set {}: {}", a, e.bare_message());
  }
}

std::string config_help() {
  std::string s =
      "TrainConfig fields (--config FILE.json or --set field=value; default, meaning; "
      "[refused]: the trainer cannot honour a non-default value yet; --set also takes lr, bs "
      "and wd for learningRate, batchSize and weightDecay):\n";
  const TrainConfig d;
  d.visit([&](const char* n, const auto& f, const char* doc) {
    // Probe: this field alone moved off its default; refused when the trainer says so.
    TrainConfig probe = d;
    bool moved = false;
    probe.visit([&](const char* pn, auto& pf, const char*) {
      using F = std::decay_t<decltype(pf)>;
      if (std::string_view(pn) != n) return;
      moved = true;
      if constexpr (std::is_same_v<F, bool>)
        pf = !pf;
      else if constexpr (std::is_same_v<F, int> || std::is_same_v<F, double>)
        pf = pf + 1;
      else if constexpr (std::is_same_v<F, std::string>)
        pf += "x";
      else if constexpr (std::is_same_v<F, DoubleList>)
        pf.push_back(1.0);
      else
        moved = false;  // enums: every value is supported or refused by its own check
    });
    const bool refused = moved && !unsupported_settings(probe).empty();
    s += fmt::format("  {:<24} {:<12} {}{}\n", n, field_str(f), refused ? "[refused] " : "", doc);
  });
  return s;
}

std::string format_config(const TrainConfig& c) {
  static const std::set<std::string> main = {"dataset", "learningRate", "batchSize", "epochs",
                                             "seed",    "optimizer",    "schedule",  "lossKind"};
  TrainConfig d;
  std::vector<std::string> defaults;
  d.visit([&](const char*, const auto& f, const char*) { defaults.push_back(field_str(f)); });
  std::vector<std::string> items;
  size_t i = 0;
  c.visit([&](const char* n, const auto& f, const char*) {
    std::string v = field_str(f);
    if (main.count(n) || v != defaults[i]) items.push_back(fmt::format("{} = {}", n, v));
    ++i;
  });
  std::string s = "config:";
  size_t col = 7;
  for (const auto& it : items) {
    if (col + it.size() + 3 > 100) s += "\n       ", col = 7;
    s += "  " + it;
    col += it.size() + 2;
  }
  return s + "\n";
}

DatasetKind parse_dataset(const std::string& s) {
  std::string n;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == '-' && i + 1 < s.size())
      n += static_cast<char>(std::toupper(static_cast<unsigned char>(s[++i])));
    else
      n += s[i];
  auto k = parse_enum<DatasetKind>(n);
  if (!k) {
    std::vector<std::string> names;
    for (DatasetKind d : data::loadable_datasets()) names.push_back(data::dataset_flag_name(d));
    fail("config", "unknown dataset '{}'{} (expected one of {})", s, did_you_mean(s, names),
         data::loadable_dataset_names(", "));
  }
  return *k;
}

double eval_crop_ratio(const TrainConfig& c) {
  const data::DatasetDescriptor* d = data::find_dataset_descriptor(c.dataset);
  return d && d->eval_center_crop ? c.testCropRatio : 1.0;
}

data::Splits load_for_net(const TrainConfig& c, const ParamTable& table, const std::string& dir,
                          int64_t limit) {
  data::LoadOptions lo;
  lo.dir = dir;
  lo.limit = limit;
  lo.seed = static_cast<uint64_t>(c.seed);
  lo.test_crop_ratio = c.testCropRatio;  // image folders' evaluation split
  lo.whole_train = c.randomResizedCrop;  // folders and packs keep whole training images
  lo.ray_near = c.nerfNear, lo.ray_far = c.nerfFar, lo.background = c.nerfBackground;
  if (table.input.size() == 3)
    lo.channels = table.input[0], lo.height = table.input[1], lo.width = table.input[2];
  const data::DatasetDescriptor* d = data::find_dataset_descriptor(c.dataset);
  if (d && (d->token_windows || d->sequence_input) && !table.input.empty())
    lo.seq_len = static_cast<int>(table.input[0]);  // windows / chains of the net's length
  return data::load_dataset(c.dataset, lo);
}

template std::string field_str(const double&);
template std::string field_str(const int&);

}  // namespace netspec::train
