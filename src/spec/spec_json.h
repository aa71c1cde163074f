// Spec files (JSON): NetSpec + optional TrainConfig, read with positions so that every error
// in a file reads `file:line:col: error: [layer 3 conv2d] unknown field 'kernal' (...)`, and
// written back in a stable, compact layout (one layer per line, optional fields only when they
// differ from their defaults). load -> save -> load is the identity. Format: docs/spec-format.md.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/layer.h"
#include "spec/train_config.h"

namespace netspec {

struct SpecFile {
  NetSpec net;
  std::optional<TrainConfig> train;  // present when the file has a "train" object
  bool operator==(const SpecFile&) const = default;
};

// Parses spec text; `filename` only labels errors. Throws ParseError (syntax, unknown kinds and
// fields, wrong types, bad enum names). Does not run the shape checks (build_param_table does).
// A train object in the seed's field names is converted (seed_aliases.h): one line per converted
// field goes to `notes`, or to stderr as "FILE: seed field ... read as ..." when notes is null.
SpecFile parse_spec(std::string_view text, const std::string& filename = "<spec>",
                    std::vector<std::string>* notes = nullptr);
SpecFile load_spec_file(const std::string& path);

std::string dump_spec(const SpecFile& spec);
void save_spec_file(const SpecFile& spec, const std::string& path);

// One layer as a single-line JSON object: {"kind": "dense", "in": 784, "out": 10}.
std::string dump_layer(const Layer& layer);

}  // namespace netspec
