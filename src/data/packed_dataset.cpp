// `netspec data pack` output (pack.h): shards + index.nspack, class names and labels from the
// index, images resized and centre-cropped at read time as the folder reader does.
#include "core/error.h"
#include "data/dataset_registry.h"
#include "data/own_data.h"
#include "data/pack.h"

namespace netspec::data {
namespace {

Splits load_packed(const LoadOptions& o) {
  if (o.dir.empty()) fail("packed", "no pack: pass --data OUT (the -o of `netspec data pack`)");
  if (!is_packed_dir(o.dir))
    fail("packed", "{}: no {} (expected the output of `netspec data pack -o {}`)", o.dir,
         kPackIndexName, o.dir);
  if (o.channels != 1 && o.channels != 3)
    fail("packed", "{}: images need a net with 1 or 3 input channels (got {})", o.dir, o.channels);
  if (o.height < 1 || o.width < 1)
    fail("packed", "{}: the input size is needed (got {}x{})", o.dir, o.height, o.width);
  return load_packed_dataset(o.dir, o.channels, o.height, o.width, o.limit, o.test_crop_ratio,
                             o.whole_train);
}

}  // namespace

NETSPEC_REGISTER_DATASET(packed, .flag = "packed", .listed_at = 65, .load = load_packed,
                         .channels = -1, .norm = kImageNetNorm,
                         .classes_from = "the pack's index (the packed folders' class names)",
                         .eval_center_crop = true)

}  // namespace netspec::data
