// Detection datasets in real formats: VOC XML folders (DIR/Annotations/*.xml, DIR/JPEGImages/,
// optional DIR/ImageSets/Main/<split>.txt), Oxford-IIIT Pets head boxes (petsDet: DIR/images/*.jpg
// + DIR/annotations/xmls/*.xml, the seed's 2x2 mosaic option) and COCO-style JSON
// (instances_*.json: images, annotations with bbox [x, y, w, h], categories). Images are decoded
// and stretched to the net's H x W with their boxes scaled by the same factors.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/datasets.h"
#include "data/det_boxes.h"

namespace netspec::data {

struct DetRecord {
  std::string image;  // path
  int64_t width = 0, height = 0;
  std::vector<Box> boxes;
};
struct DetSet {
  std::vector<DetRecord> records;
  std::vector<std::string> classes;  // index = Box::cls
};

// One VOC annotation file; class names are looked up in / appended to `classes`.
DetRecord read_voc_xml(const std::string& xml_path, const std::string& image_dir,
                       std::vector<std::string>& classes);
// A VOC folder; split non-empty: the ids of ImageSets/Main/<split>.txt, else every xml (sorted).
// classes non-empty: a fixed class list (an unknown name is an error), else sorted names found.
DetSet read_voc(const std::string& dir, const std::string& split,
                std::vector<std::string> classes = {});
// Oxford-IIIT Pets: annotations/xmls/*.xml with images/<name>.jpg; classes {cat, dog}.
DetSet read_pets_det(const std::string& dir);
// COCO instances JSON; images resolved under image_dir; iscrowd boxes skipped; classes in
// category-id order (Box::cls = the category's index in that order).
DetSet read_coco(const std::string& json_path, const std::string& image_dir);

// Decoded images ui8 [N, 3, H, W] and their boxes in that frame.
struct DetImages {
  Tensor x;
  std::vector<std::vector<Box>> boxes;
  std::vector<std::string> classes;
};
// limit > 0: the first `limit` records. mosaic: each sample tiles 4 records (i, i+1, i+2, i+3
// mod N) into the 2x2 quadrants of H x W (the seed's petsDet mosaics); N samples either way.
DetImages load_det_images(const DetSet& set, int64_t height, int64_t width, int64_t limit = 0,
                          bool mosaic = false);
// What Splits::det holds: train and test images (the net's H x W) with their boxes.
struct DetData {
  DetImages train, test;
};
// petsDet (2x2 mosaics; the last 20% of the sorted annotations are the test split), voc
// (ImageSets/Main/train.txt and val.txt) and coco (annotations/instances_{train,val}.json with
// images/): train / test hold ui8 images with ImageNet normalisation and i32 zero labels; the
// boxes are in det.
Splits load_det_splits(DatasetKind kind, const LoadOptions& o);

// Bilinear stretch of ui8 [3, h, w] to [3, H, W] (pixel centres aligned, no antialiasing).
Tensor resize_bilinear(const Tensor& img, int64_t height, int64_t width);

}  // namespace netspec::data
