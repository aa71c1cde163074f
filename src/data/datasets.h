// The datasets a TrainConfig can name, loaded whole into memory as train and test splits with the
// per-dataset normalisation attached (or applied, for f32 storage). Every reader checks its files
// and names the file and the fault on error. `dir` empty means the dataset's default location
// (Debian's package where one exists); limit > 0 keeps only `limit` training samples. Each kind
// is a registered descriptor (dataset_registry.h); these functions look it up.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "data/idx.h"
#include "data/loader.h"
#include "data/text.h"
#include "spec/enums.h"

namespace netspec::data {

struct Splits {
  Dataset train, test;
  // Class names by label (torchvision's names; folder names for image folders; for text the
  // vocabulary's characters as UTF-8).
  std::vector<std::string> class_names;
  // Text only: the corpus, to redraw training windows each epoch with text_windows().
  std::shared_ptr<const TextCorpus> text;
  // Detection (petsDet, voc, coco; det_data.h): the images with their boxes. train / test then
  // hold the images with placeholder labels; the trainer assigns the loss targets per epoch.
  std::shared_ptr<const struct DetData> det;
  // Radiance fields (radiance_field.h): the views' size and count behind the ray splits.
  std::shared_ptr<const struct RayViews> views;
  // Image folders: which pipeline the splits took (in RAM or streamed) and why, one line.
  std::string pipeline;
};

struct LoadOptions {
  std::string dir;     // --data (a directory; a file for text); empty: the default location
  int64_t limit = 0;   // > 0: keep this many training samples (image folders: evenly strided)
  int64_t height = 0;  // image folders: the net's input H x W (required)
  int64_t width = 0;
  int seq_len = 0;               // text: window length T (required)
  uint64_t seed = 0;             // text: the epoch-0 training windows
  double test_crop_ratio = 1.0;  // image folders: the evaluation split's centre-crop ratio
  int64_t channels = 3;          // folder: the net's input channels (1: grayscale)
  // Image folders and packs: the training split serves whole images (TrainConfig::
  // randomResizedCrop), decoded in RAM when they fit the memory budget, else streamed.
  bool whole_train = false;
  // radianceField: the ray interval rendered and the grey behind the scene (TrainConfig nerf*).
  double ray_near = 2, ray_far = 6, background = 1;
};

// imagenet reads ImageNet's layout through the folder reader (train/<wnid>/*.JPEG, val/ as class
// folders or flat with a labels file). Kinds outside loadable_datasets() are refused, naming them.
Splits load_dataset(DatasetKind kind, const LoadOptions& o);
std::vector<DatasetKind> loadable_datasets();
// The --dataset spelling of a kind ("fashion-mnist"), and the loadable ones joined by `sep`.
std::string dataset_flag_name(DatasetKind kind);
std::string loadable_dataset_names(const std::string& sep);
Splits load_dataset(DatasetKind kind, const std::string& dir, int64_t limit);

// Per-channel mean/std a dataset's images are normalised with (for `netspec predict`); fails
// for datasets that are not images.
Normalization dataset_normalization(DatasetKind kind);
// What TrainConfig::augment turns on for a dataset: crop (padding per Augment::pad_for) + flip
// for natural images and clothing; mnist crops with padding 2 and never flips (a mirrored digit
// is another glyph); text has none (augment is refused for it).
Augment standard_augment(DatasetKind kind);
// torchvision's class names for the fixed-class datasets (mnist, fashionMnist, cifar10).
std::vector<std::string> dataset_class_names(DatasetKind kind);

}  // namespace netspec::data
