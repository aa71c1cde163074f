// Dataset descriptors: what netspec knows about each DatasetKind (its --dataset spelling, class
// names, normalisation, default augmentation, channels, reader), one per kind, each registered
// from the file beside its reader (src/data/<name>_dataset.cpp) as layer kinds register. The
// public functions of datasets.h (load_dataset, dataset_normalization, standard_augment, ...)
// look the descriptor up; nothing else switches on DatasetKind. netspec_data is linked
// whole-archive so these registrations are never dropped.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "data/datasets.h"

namespace netspec::data {

struct DatasetDescriptor {
  DatasetKind kind{};  // set by NETSPEC_REGISTER_DATASET
  // The --dataset spelling: the enum name in kebab case ("fashion-mnist"); the registrar checks it.
  const char* flag = "";
  // Position in loadable_datasets() (`train --help`, "expected one of" lists); ties: enum order.
  int listed_at = 0;
  // Reads the train and test splits (limit included); nullptr: the kind is not loadable and
  // load_dataset refuses it by name.
  Splits (*load)(const LoadOptions&) = nullptr;
  // Image channels: 0 not images, -1 the net's input channels (1 or 3).
  int64_t channels = 0;
  // Per-channel mean/std of pixel values in [0, 1] (dataset_normalization); none: not images
  // normalised that way (text, csv, z-scored volumes).
  std::optional<Normalization> norm{};
  // What TrainConfig::augment turns on; none: refused, saying `no_augment` (why).
  std::optional<Augment> augment = Augment::standard();
  const char* no_augment = "";
  // torchvision's fixed class names (dataset_class_names; load_dataset fills Splits::class_names
  // with them); empty: `classes_from` says where the reader takes them from.
  std::vector<std::string> class_names{};
  const char* classes_from = "";
  // Images of any size whose evaluation split is resized and centre-cropped by testCropRatio
  // (eval_crop_ratio); false: fixed-size images, taken whole (crop ratio 1).
  bool eval_center_crop = false;
  // Samples are windows of token ids: a run on them is the text task whatever its loss.
  bool token_windows = false;
  // Samples are sequences as long as the net's input [L] (LoadOptions::seq_len; protein chains).
  bool sequence_input = false;
};

// The descriptor of `kind`, or nullptr when none is registered.
const DatasetDescriptor* find_dataset_descriptor(DatasetKind kind);
// Fails `[data] dataset X has no descriptor ...` when none is registered.
const DatasetDescriptor& dataset_descriptor(DatasetKind kind);
// Every registered descriptor, in enum order.
std::vector<const DatasetDescriptor*> dataset_descriptors();

// One registration per kind, at the end of its <name>_dataset.cpp, the fields in declaration
// order (GCC warns when a designated initializer skips a leading member):
//   NETSPEC_REGISTER_DATASET(cifar10, .flag = "cifar10", .listed_at = 30, .load = load_cifar10,
//                            .channels = 3, .norm = kCifar10Norm, ...)
// A kind registered twice, a flag that is not the kind's kebab-case name, or a refused augment
// without its reason aborts at start-up.
struct DatasetRegistrar {
  explicit DatasetRegistrar(DatasetDescriptor d);
};
#define NETSPEC_REGISTER_DATASET(kind_, ...)                                \
  static const ::netspec::data::DatasetRegistrar dataset_registrar_##kind_{ \
      ::netspec::data::DatasetDescriptor{.kind = ::netspec::DatasetKind::kind_, __VA_ARGS__}};

}  // namespace netspec::data
