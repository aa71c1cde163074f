// BraTS as MSD Task01_BrainTumour (brats.cpp): 4-modality axial slices z-scored per volume, label
// maps [N, H, W]; brats at 240x240, brats224 its 224x224 centre crop.
#include "core/error.h"
#include "data/brats.h"
#include "data/dataset_registry.h"

namespace netspec::data {
namespace {

Splits load_brats_at(const LoadOptions& o, DatasetKind kind, int64_t size) {
  if (o.dir.empty())
    fail("brats",
         "no data directory: pass --data DIR with MSD Task01_BrainTumour (DIR/dataset.json, "
         "imagesTr, labelsTr), e.g. from `netspec data synth --task seg --format brats --n 10 "
         "-o DIR`");
  if (o.height != size || o.width != size)
    fail("brats", "{} slices are {}x{} (got a net input of {}x{})", enum_name(kind), size, size,
         o.height, o.width);
  BratsSplits b = load_brats(o.dir, size, size, o.limit);
  Splits s;
  s.train = std::move(b.train);
  s.test = std::move(b.test);
  s.class_names = kBratsClasses;
  return s;
}

constexpr const char* kBratsFrom =
    "background, edema, non-enhancing tumour, enhancing tumour (kBratsClasses, brats.h)";

Splits load_brats240(const LoadOptions& o) { return load_brats_at(o, DatasetKind::brats, 240); }
Splits load_brats224(const LoadOptions& o) { return load_brats_at(o, DatasetKind::brats224, 224); }

}  // namespace

// z-scored per volume and modality: no fixed normalisation.
NETSPEC_REGISTER_DATASET(brats, .flag = "brats", .listed_at = 120, .load = load_brats240,
                         .channels = 4, .classes_from = kBratsFrom)

NETSPEC_REGISTER_DATASET(brats224, .flag = "brats224", .listed_at = 130, .load = load_brats224,
                         .channels = 4, .classes_from = kBratsFrom)

}  // namespace netspec::data
