// radianceField (radiance_field.h): rays of posed views for the nerf task. Without --data the
// procedural scene netspec generates (30 training and 4 held-out 32x32 views); --data DIR reads
// a folder in the NeRF transforms.json layout.
#include "data/dataset_registry.h"
#include "data/radiance_field.h"

namespace netspec::data {
namespace {

Splits load_radiance_field(const LoadOptions& o) {
  if (o.dir.empty())
    return load_procedural_field(ProceduralViews{}, o.ray_near, o.ray_far, o.background, o.limit);
  return load_transforms_folder(o.dir, o.background, o.limit);
}

}  // namespace

NETSPEC_REGISTER_DATASET(radianceField, .flag = "radiance-field", .listed_at = 160,
                         .load = load_radiance_field, .channels = 0, .norm = std::nullopt,
                         .augment = std::nullopt,
                         .no_augment = "camera rays cannot be cropped or flipped",
                         .classes_from = "none (samples are rays with colours)")

}  // namespace netspec::data
