// Spec file reader/writer. Each struct's visit() drives both directions, so the file format is
// exactly the field lists in layers.def, layer.h (NetSpec) and train_config.h.
#include "spec/spec_json.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/file_check.h"
#include "core/json_strict.h"
#include "spec/seed_aliases.h"

namespace netspec {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

class Reader {
 public:
  Reader(const JsonPositions& pos, std::string file) : pos_(pos), file_(std::move(file)) {}

  [[noreturn]] void error(const std::string& pointer, const std::string& msg) const {
    throw ParseError(file_, pos_.at(pointer), msg);
  }

  template <class T>
  void read(const json& j, T& out, const std::string& ptr, const std::string& where,
            const char* name) const {
    auto bad = [&](const char* expected) {
      error(ptr, fmt::format("[{}] field '{}' has the wrong type (got {}, expected {})", where,
                             name, j.dump(), expected));
    };
    if constexpr (std::is_same_v<T, bool>) {
      if (!j.is_boolean()) bad("true or false");
      out = j.get<bool>();
    } else if constexpr (std::is_same_v<T, int>) {
      if (!j.is_number_integer()) bad("an integer");
      // An unsigned value past int64 would wrap (18446744073709551615 read as -1).
      if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(std::numeric_limits<int>::max()))
        bad("an integer in 32-bit range");
      int64_t v = j.get<int64_t>();
      if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
        bad("an integer in 32-bit range");
      out = static_cast<int>(v);
    } else if constexpr (std::is_same_v<T, double>) {
      if (!j.is_number()) bad("a number");
      out = j.get<double>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!j.is_string()) bad("a string");
      out = j.get<std::string>();
    } else if constexpr (std::is_same_v<T, DoubleList>) {
      if (!j.is_array()) bad("an array of numbers");
      out.clear();
      for (const auto& e : j) {
        if (!e.is_number()) bad("an array of numbers");
        out.push_back(e.get<double>());
      }
    } else {
      static_assert(std::is_enum_v<T>);
      if (!j.is_string()) bad("a name");
      auto e = parse_enum<T>(j.get<std::string>());
      if (!e)
        error(ptr,
              fmt::format("[{}] unknown {} '{}' for field '{}' (expected one of {})", where,
                          EnumTraits<T>::kType, j.get<std::string>(), name, enum_choices<T>()));
      out = *e;
    }
  }

  // Reads the fields `visit` names from object `j` at `ptr`; rejects unknown keys (except
  // those in `extra`) and missing required fields.
  template <class S, class Visit>
  void read_object(const json& j, S& s, Visit visit, const std::string& ptr,
                   const std::string& where, const std::set<std::string>& extra) const {
    if (!j.is_object())
      error(ptr, fmt::format("[{}] expected an object (got {})", where, j.type_name()));
    // Unknown keys first: a misspelt key also explains a "missing" one.
    std::set<std::string> known = extra;
    std::string names;
    visit(s, [&](const char* name, auto&, bool) {
      known.insert(name);
      names += (names.empty() ? "" : ", ") + std::string(name);
    });
    for (auto it = j.begin(); it != j.end(); ++it)
      if (!known.count(it.key()))
        error(ptr + "/" + it.key(), fmt::format("[{}] unknown field '{}' (expected one of {})",
                                                where, it.key(), names.empty() ? "none" : names));
    visit(s, [&](const char* name, auto& field, bool required) {
      auto it = j.find(name);
      if (it == j.end()) {
        if (required) error(ptr, fmt::format("[{}] missing required field '{}'", where, name));
        return;
      }
      read(*it, field, ptr + "/" + name, where, name);
    });
  }

  Layer layer(const json& j, const std::string& ptr, int index) const {
    std::string where = fmt::format("layer {}", index);
    if (!j.is_object())
      error(ptr, fmt::format("[{}] expected a layer object (got {})", where, j.type_name()));
    auto k = j.find("kind");
    if (k == j.end() || !k->is_string())
      error(ptr, fmt::format("[{}] needs a \"kind\" string", where));
    Layer out;
    std::string kind = k->get<std::string>();
    if (!make_layer(kind, out)) {
      std::string all;
      for (auto n : layer_kind_names()) all += (all.empty() ? "" : ", ") + std::string(n);
      error(ptr + "/kind",
            fmt::format("[{}] unknown layer kind '{}' (expected one of {})", where, kind, all));
    }
    where += " " + kind;
    std::visit(
        [&](auto& l) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(l)>, std::monostate>)
            read_object(j, l, [](auto& s, auto&& v) { s.visit(v); }, ptr, where, {"kind"});
        },
        out);
    return out;
  }

 private:
  const JsonPositions& pos_;
  std::string file_;
};

template <class T>
ojson to_j(const T& v) {
  if constexpr (std::is_enum_v<T>)
    return std::string(enum_name(v));
  else
    return v;
}

// Required fields, then optional ones that differ from the default-constructed value.
template <class S>
ojson object_to_json(const S& s, ojson out = ojson::object()) {
  S def{};
  std::vector<ojson> defaults;
  def.visit([&](const char*, const auto& f, auto...) { defaults.push_back(to_j(f)); });
  size_t i = 0;
  s.visit([&](const char* name, const auto& f, bool required) {
    ojson v = to_j(f);
    if (required || v != defaults[i]) out[name] = v;
    ++i;
  });
  return out;
}

}  // namespace

SpecFile parse_spec(std::string_view text, const std::string& filename,
                    std::vector<std::string>* notes) {
  JsonPositions pos(text, filename);
  json j = parse_json_checked<json>(text, filename, pos);
  Reader r(pos, filename);
  SpecFile out;
  r.read_object(j, out.net, [](auto& s, auto&& v) { s.visit_scalars(v); }, "", "net",
                {"layers", "train"});
  // Normalisation epsilons divide: a zero or negative one diverges (or NaNs) at the first step.
  for (const auto& [name, v] : {std::pair{"bnEps", out.net.bnEps}, {"lnEps", out.net.lnEps}})
    if (!(v > 0) || !std::isfinite(v))
      r.error(std::string("/") + name,
              fmt::format("[net] {} must be a finite number > 0 (got {})", name, v));
  auto layers = j.find("layers");
  if (layers == j.end()) r.error("", "[net] missing required field 'layers'");
  if (!layers->is_array()) r.error("/layers", "[net] 'layers' must be an array");
  for (size_t i = 0; i < layers->size(); ++i)
    out.net.layers.push_back(
        r.layer((*layers)[i], fmt::format("/layers/{}", i), static_cast<int>(i)));
  if (auto t = j.find("train"); t != j.end()) {
    // The seed's field names and units (seed_aliases.h), rewritten before the strict read.
    json train = *t;
    std::vector<std::string> seed_notes;
    try {
      seed_notes = convert_seed_fields(train, {out.net.inputHeight, out.net.inputWidth});
    } catch (const SeedFieldError& e) {
      r.error("/train/" + e.key, e.what());
    }
    for (const std::string& n : seed_notes) {
      if (notes)
        notes->push_back(n);
      else
        std::cerr << filename << ": " << n << "\n";
    }
    TrainConfig tc;
    r.read_object(train, tc,
                  [](auto& s, auto&& v) {
                    s.visit([&](const char* n, auto& f, const char*) { v(n, f, false); });
                  },
                  "/train", "train", {});
    out.train = tc;
  }
  return out;
}

SpecFile load_spec_file(const std::string& path) {
  return parse_spec(read_regular_file("spec", path), path);
}

std::string dump_layer(const Layer& layer) {
  ojson o = ojson::object();
  o["kind"] = std::string(layer_kind(layer));
  std::visit(
      [&](const auto& l) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(l)>, std::monostate>)
          o = object_to_json(l, o);
      },
      layer);
  return o.dump();
}

std::string dump_spec(const SpecFile& spec) {
  ojson head = ojson::object();
  spec.net.visit_scalars([&](const char* n, const auto& f, bool) { head[n] = to_j(f); });
  std::string out = "{\n";
  for (auto it = head.begin(); it != head.end(); ++it)
    out += fmt::format("  \"{}\": {},\n", it.key(), it.value().dump());
  out += "  \"layers\": [\n";
  for (size_t i = 0; i < spec.net.layers.size(); ++i)
    out +=
        "    " + dump_layer(spec.net.layers[i]) + (i + 1 < spec.net.layers.size() ? ",\n" : "\n");
  out += "  ]";
  if (spec.train) {
    ojson t = ojson::object();
    TrainConfig def;
    std::vector<ojson> defaults;
    def.visit([&](const char*, const auto& f, const char*) { defaults.push_back(to_j(f)); });
    size_t i = 0;
    spec.train->visit([&](const char* n, const auto& f, const char*) {
      if (to_j(f) != defaults[i]) t[n] = to_j(f);
      ++i;
    });
    out += ",\n  \"train\": " + (t.empty() ? std::string("{}") : t.dump(2));
    // Indent the nested object's lines by two more spaces.
    size_t p = out.rfind("\"train\": ");
    for (size_t q = out.find('\n', p); q != std::string::npos; q = out.find('\n', q + 1))
      out.insert(q + 1, "  ");
  }
  out += "\n}\n";
  return out;
}

void save_spec_file(const SpecFile& spec, const std::string& path) {
  std::ofstream f(path);
  if (!f) fail("spec", "cannot write spec file '{}'", path);
  f << dump_spec(spec);
}

}  // namespace netspec
