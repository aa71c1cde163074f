// CIFAR-10 (cifar.cpp): the binary batches, ui8 [N, 3, 32, 32] normalised by the Loader.
#include "data/cifar.h"
#include "data/dataset_registry.h"

namespace netspec::data {
namespace {

Splits load_cifar10(const LoadOptions& o) {
  Splits s;
  s.train = load_cifar10_split(o.dir, true);
  s.test = load_cifar10_split(o.dir, false);
  if (o.limit > 0) s.train = take_first(s.train, o.limit);
  return s;
}

}  // namespace

NETSPEC_REGISTER_DATASET(cifar10, .flag = "cifar10", .listed_at = 30, .load = load_cifar10,
                         .channels = 3, .norm = kCifar10Norm,
                         .class_names = {"airplane", "automobile", "bird", "cat", "deer", "dog",
                                         "frog", "horse", "ship", "truck"})

}  // namespace netspec::data
