// Oxford-IIIT Pets segmentation in its release layout: DIR/images/<name>.jpg,
// DIR/annotations/trimaps/<name>.png (1 = pet, 2 = background, 3 = border), and the split lists
// DIR/annotations/trainval.txt and test.txt (lines "<name> <class> <species> <breed>", '#'
// comments). Images are resized to cover the net's H x W and centre-cropped (resize_center_crop);
// trimaps take the same geometry with nearest sampling. Classes: 0 background, 1 pet, 2 border
// (background first, so the zero label of augmentation padding is background).
#pragma once
#include <string>
#include <vector>

#include "data/dataset.h"

namespace netspec::data {

// x ui8 [N, 3, H, W] (ImageNet normalisation attached), y i32 [N, H, W].
struct PetsSplit {
  Dataset ds;
  std::vector<std::string> names;
};
// `list` is "trainval" or "test"; limit > 0 keeps the first `limit` names of the list.
PetsSplit load_pets_split(const std::string& dir, const std::string& list, int64_t height,
                          int64_t width, int64_t limit = 0);
inline const std::vector<std::string> kPetsClasses{"background", "pet", "border"};
// Label map ui8 [h, w] -> i32 [H, W] with resize_center_crop's geometry, nearest sampling
// (source index floor((i + 0.5)·in / resized), as PIL's NEAREST).
Tensor resize_mask_nearest(const Tensor& mask, int64_t height, int64_t width);

}  // namespace netspec::data
