// TrainConfig from the command line: a JSON TrainConfig file (--config, parsed by spec_json's
// reader, so errors read `file:line:col: error: ...`) and `--set field=value` overrides; help and
// printing of every field. Only the fields a file or --set names change; validate() runs after.
#pragma once
#include <string>
#include <string_view>

#include "data/datasets.h"
#include "spec/param_table.h"
#include "spec/train_config.h"

namespace netspec::train {

// Applies the fields named by a JSON object of TrainConfig fields (`label` names it in errors).
void apply_config_text(TrainConfig& c, std::string_view text, const std::string& label);
void apply_config_file(TrainConfig& c, const std::string& path);
// "field=value": value is JSON (3, 0.1, true, [1, 2], "x") or else taken as a string
// (enum names, paths): `--set optimizer=sgd`, `--set learningRate=3e-4`.
// The field name may be a short alias (set_field_alias).
void apply_set(TrainConfig& c, const std::string& assignment);
// `--set` aliases: lr -> learningRate, bs -> batchSize, wd -> weightDecay; other names as given.
std::string set_field_alias(const std::string& name);
// One line per field: name, default, meaning (for --help).
std::string config_help();
// `name = value` for every field that differs from the defaults, plus the main ones.
std::string format_config(const TrainConfig& c);
// "fashion-mnist" -> fashionMnist (kebab-case or the enum name); throws listing the choices.
DatasetKind parse_dataset(const std::string& s);
// The centre-crop ratio the evaluation split of c's dataset was loaded with (testCropRatio for the
// image-folder datasets imagenette, imagenet and folder; 1 for the rest): predict, cam and report
// preprocess an image file the same way.
double eval_crop_ratio(const TrainConfig& c);
// Loads c.dataset for a net: image folders at the net's input H x W, text windows of its length.
data::Splits load_for_net(const TrainConfig& c, const ParamTable& table, const std::string& dir,
                          int64_t limit);
// A field's value as text (enums by name, lists as [a, b]).
template <class T>
std::string field_str(const T& v);

}  // namespace netspec::train
