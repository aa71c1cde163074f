// ImageNet's validation layout: the images of a split lie flat in one folder (val/*.JPEG) and a
// labels file gives each one's class. Lines `IMAGE CLASS` or `IMAGE,CLASS` (IMAGE with or without
// its extension; CLASS a training class folder name, its first word taken, so Kaggle's
// LOC_val_solution.csv "ImageId,PredictionString" works too); blank and '#' lines and a header
// line are skipped. Every image needs exactly one label of a training class, else an error names
// the file, line and label; labels of images not in the folder are ignored.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "data/image.h"

namespace netspec::data {

// The labels file for a flat split: DIR/val_labels.txt, DIR/val_labels.csv,
// DIR/LOC_val_solution.csv, or the same names inside split_dir ("" when none exists).
std::string find_val_labels(const std::string& dir, const std::string& split_dir);
// True when split_dir holds images and no subfolders.
bool is_flat_image_dir(const std::string& split_dir);
// The split's image files, sorted, each with its class index (as load_flat_split reads them).
std::vector<std::pair<std::string, int32_t>> list_flat_split(
    const std::string& split_dir, const std::string& labels_file,
    const std::vector<std::string>& classes);

}  // namespace netspec::data
