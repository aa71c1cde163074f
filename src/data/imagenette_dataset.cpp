// Imagenette (image.cpp's folder reader): DIR/train/<class>/* and DIR/val/<class>/*, RGB at the
// net's input size, ImageNet normalisation, the sorted folder names as classes.
#include <filesystem>

#include "core/error.h"
#include "data/dataset_registry.h"
#include "data/image.h"

namespace netspec::data {
namespace {

Splits load_imagenette(const LoadOptions& o) {
  namespace fs = std::filesystem;
  if (o.dir.empty())
    fail("imagenette",
         "no data directory: pass --data DIR with DIR/train/<class>/*.JPEG and "
         "DIR/val/<class>/*.JPEG (e.g. imagenette2-320 unpacked)");
  ImageFolder tr = load_image_folder((fs::path(o.dir) / "train").string(), o.height, o.width,
                                     kImageNetNorm, o.limit);  // the limit applies while listing
  ImageFolder va = load_image_folder((fs::path(o.dir) / "val").string(), o.height, o.width,
                                     kImageNetNorm, 0, tr.classes, o.test_crop_ratio);
  Splits s;
  s.train = std::move(tr.ds);
  s.test = std::move(va.ds);
  s.class_names = std::move(tr.classes);
  return s;
}

}  // namespace

NETSPEC_REGISTER_DATASET(imagenette, .flag = "imagenette", .listed_at = 40, .load = load_imagenette,
                         .channels = 3, .norm = kImageNetNorm,
                         .classes_from = "the sorted class folder names of DIR/train",
                         .eval_center_crop = true)

}  // namespace netspec::data
