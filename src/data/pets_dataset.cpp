// Oxford-IIIT Pets segmentation (pets.cpp): images at the net's input, trimap labels [N, H, W].
#include "core/error.h"
#include "data/dataset_registry.h"
#include "data/pets.h"

namespace netspec::data {
namespace {

Splits load_pets(const LoadOptions& o) {
  if (o.dir.empty())
    fail("pets",
         "no data directory: pass --data DIR with the Oxford-IIIT Pets layout (DIR/images, "
         "DIR/annotations/trimaps, DIR/annotations/trainval.txt, test.txt), e.g. from "
         "`netspec data synth --task seg --format pets --n 400 -o DIR`");
  Splits s;
  // The limit applies while listing.
  s.train = load_pets_split(o.dir, "trainval", o.height, o.width, o.limit).ds;
  s.test = load_pets_split(o.dir, "test", o.height, o.width).ds;
  s.class_names = kPetsClasses;
  return s;
}

}  // namespace

NETSPEC_REGISTER_DATASET(pets, .flag = "pets", .listed_at = 80, .load = load_pets, .channels = 3,
                         .norm = kImageNetNorm,
                         .classes_from = "background, pet, border (kPetsClasses, pets.h)")

}  // namespace netspec::data
