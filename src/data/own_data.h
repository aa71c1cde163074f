// A user's own data: `folder` (image class folders: DIR/train/<class>/*.{jpg,png} with DIR/val or
// DIR/test beside it, or DIR/<class>/* alone, then a --val-split holds out validation; a val/
// with the images flat takes their classes from a labels file (data/flat_val.h); RGB, or
// grayscale as the channel mean for a 1-channel net; ImageNet normalisation) and `csv` (numeric
// feature columns and a label column, `label` by header name else the last; labels are integers
// or names, names sorted into class indices). Both name the file and the fault on error.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "data/datasets.h"
#include "data/sample_source.h"

namespace netspec::data {

// The files of an image-folder tree, labelled, as load_image_folder_dataset reads them (train/
// with val/ or test/ beside it, or the class folders alone), without decoding.
struct FolderSplitFiles {
  std::vector<std::pair<std::string, int32_t>> train, test;
  bool has_test = false;
  std::vector<std::string> classes;
};
FolderSplitFiles list_folder_splits(const std::string& dir, int64_t limit);
// channels: the net's input channels (1 or 3); limit as LoadOptions::limit.
// whole_train: LoadOptions::whole_train.
Splits load_image_folder_dataset(const std::string& dir, int64_t channels, int64_t height,
                                 int64_t width, int64_t limit, double crop_ratio,
                                 bool whole_train = false);
// A training split of whole images over `src` (labels by sample): decoded in RAM when their
// estimated size fits the budget, else streamed from src; `line` gets the choice.
Dataset whole_image_split(std::shared_ptr<const SampleSource> src, std::vector<int32_t> labels,
                          int64_t channels, int64_t height, int64_t width, std::string& line);
// The whole file becomes the training split (test empty: use --val-split); features f32 [N, D].
Splits load_csv_dataset(const std::string& path, int64_t limit);

// Rows to predict on, f32 [N, features]: each row holds `features` numbers, or features + 1
// with the label column as training reads it (`label` by header name, else the last) left out;
// a header row is skipped. Errors name path:line.
Tensor load_csv_features(const std::string& path, int64_t features);

// Grayscale from RGB: ImageNet's per-channel means and stds averaged (0.449, 0.226).
inline const Normalization kGrayImageNetNorm{{0.449f}, {0.226f}};

}  // namespace netspec::data
