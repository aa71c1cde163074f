// Detection sets (det_data.cpp): images stretched to the net's input with their boxes in
// Splits::det (the trainer assigns the loss targets per epoch), ImageNet normalisation.
#include "data/dataset_registry.h"
#include "data/det_data.h"

namespace netspec::data {
namespace {

Splits load_pets_det(const LoadOptions& o) { return load_det_splits(DatasetKind::petsDet, o); }
Splits load_voc(const LoadOptions& o) { return load_det_splits(DatasetKind::voc, o); }
Splits load_coco(const LoadOptions& o) { return load_det_splits(DatasetKind::coco, o); }

}  // namespace

// Oxford-IIIT Pets head boxes as 2x2 mosaics: DIR/images, DIR/annotations/xmls.
NETSPEC_REGISTER_DATASET(petsDet, .flag = "pets-det", .listed_at = 90, .load = load_pets_det,
                         .channels = 3, .norm = kImageNetNorm,
                         .classes_from = "cat, dog (the reader's)")

// Pascal VOC: DIR/Annotations, DIR/JPEGImages, DIR/ImageSets/Main/{train,val}.txt.
NETSPEC_REGISTER_DATASET(voc, .flag = "voc", .listed_at = 100, .load = load_voc, .channels = 3,
                         .norm = kImageNetNorm,
                         .classes_from = "the sorted object names of the training annotations")

// COCO: DIR/annotations/instances_{train,val}.json, DIR/images.
NETSPEC_REGISTER_DATASET(coco, .flag = "coco", .listed_at = 110, .load = load_coco, .channels = 3,
                         .norm = kImageNetNorm,
                         .classes_from = "the categories in category-id order")

}  // namespace netspec::data
