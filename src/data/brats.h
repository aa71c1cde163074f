// BraTS as the Medical Segmentation Decathlon's Task01_BrainTumour: DIR/dataset.json whose
// "training" list names DIR/imagesTr/<case>.nii.gz (4D [x, y, z, 4]: FLAIR, T1w, T1gd, T2w) and
// DIR/labelsTr/<case>.nii.gz (3D, 0 background, 1 edema, 2 non-enhancing tumour, 3 enhancing
// tumour), read with Debian's NIfTI-1 library (niftiio). Each volume is z-scored per modality over
// its brain voxels (any modality non-zero; the rest set to 0), cut into axial slices that hold
// brain, and centre-cropped to the net's H x W (240 for `brats`, 224 for `brats224`: the 8-pixel
// margin MSD's skull-stripped volumes leave empty). Every 5th case (case index % 5 == 4) is the
// test split, so no patient is in both.
#pragma once
#include <string>
#include <vector>

#include "data/dataset.h"

namespace netspec::data {

inline const std::vector<std::string> kBratsClasses{"background", "edema", "non-enhancing tumour",
                                                    "enhancing tumour"};
// x f32 [N, 4, H, W] (normalised), y i32 [N, H, W]; limit > 0 keeps the first `limit` training
// slices.
struct BratsSplits {
  Dataset train, test;
};
BratsSplits load_brats(const std::string& dir, int64_t height, int64_t width, int64_t limit = 0);

}  // namespace netspec::data
