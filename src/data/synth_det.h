// Procedural detection data with known boxes, written in the real formats the readers take
// (`netspec data synth --task det`): each image has a smooth random background and 1-4 objects
// whose class is their shape (rect, ellipse, triangle, cross) in a jittered class colour; a box is
// the exact pixel-edge extent of its shape (in the PNG pixels; JPEG's rounding blurs the edges
// by a pixel or so). VOC: DIR/JPEGImages/*.jpg (JPEG, quality 95, as VOC ships them),
// DIR/Annotations/*.xml, DIR/ImageSets/Main/{train,val}.txt. COCO: DIR/images/*.png (lossless),
// DIR/annotations/instances_{train,val}.json.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace netspec::data {

struct SynthDetOptions {
  std::string dir;
  std::string format = "voc";  // voc | coco
  int64_t n = 200;             // images; the last val_fraction of them form the val split
  int64_t size = 128;          // square image side
  int64_t classes = 3;         // 1..4
  double val_fraction = 0.2;
  uint64_t seed = 0;
};

// The class names in index order (the first `classes` of rect, ellipse, triangle, cross).
std::vector<std::string> synth_det_classes(int64_t classes);
// Writes the dataset; returns the number of boxes written.
int64_t write_synth_det(const SynthDetOptions& o);

}  // namespace netspec::data
