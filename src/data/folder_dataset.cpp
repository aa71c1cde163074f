// A user's image folders and ImageNet's layout (own_data.cpp, flat_val.cpp): train/<class>/* with
// val/ or test/ as class folders or flat with a labels file, RGB or grayscale for a 1-channel net.
#include "data/dataset_registry.h"
#include "data/own_data.h"

namespace netspec::data {
namespace {

Splits load_folder(const LoadOptions& o) {
  // The limit applies while listing (an evenly strided subset).
  return load_image_folder_dataset(o.dir, o.channels, o.height, o.width, o.limit,
                                   o.test_crop_ratio, o.whole_train);
}

}  // namespace

NETSPEC_REGISTER_DATASET(imagenet, .flag = "imagenet", .listed_at = 50, .load = load_folder,
                         .channels = -1, .norm = kImageNetNorm,
                         .classes_from = "the sorted class folder names of DIR/train (the wnids)",
                         .eval_center_crop = true)

NETSPEC_REGISTER_DATASET(folder, .flag = "folder", .listed_at = 60, .load = load_folder,
                         .channels = -1, .norm = kImageNetNorm,
                         .classes_from = "the sorted class folder names",
                         .eval_center_crop = true)

}  // namespace netspec::data
