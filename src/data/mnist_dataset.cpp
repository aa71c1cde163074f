// MNIST and Fashion-MNIST (idx.cpp): IDX files, ui8 [N, 1, 28, 28] normalised per batch by the
// Loader (so RandAugment / AutoAugment apply, as torchvision's do to grayscale), the default
// directory Debian's package (dataset-fashion-mnist) or /usr/share/datasets/mnist.
#include "data/dataset_registry.h"
#include "data/idx.h"

namespace netspec::data {
namespace {

Splits load_idx(const LoadOptions& o, const char* default_dir, float mean, float sd) {
  const std::string d = o.dir.empty() ? std::string(default_dir) : o.dir;
  Splits s;
  s.train = load_idx_split(d, true, mean, sd);
  s.test = load_idx_split(d, false, mean, sd);
  if (o.limit > 0) s.train = take_first(s.train, o.limit);
  return s;
}

Splits load_mnist(const LoadOptions& o) {
  return load_idx(o, "/usr/share/datasets/mnist", kMnistMean, kMnistStd);
}

Splits load_fashion_mnist(const LoadOptions& o) {
  return load_idx(o, kFashionMnistDir, kFashionMean, kFashionStd);
}

}  // namespace

// A mirrored digit is another glyph: crop with padding 2, never flip.
NETSPEC_REGISTER_DATASET(mnist, .flag = "mnist", .listed_at = 10, .load = load_mnist, .channels = 1,
                         .norm = Normalization{{kMnistMean}, {kMnistStd}},
                         .augment = Augment{true, 2, false},
                         .class_names = {"0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
                                         "5 - five", "6 - six", "7 - seven", "8 - eight",
                                         "9 - nine"})

NETSPEC_REGISTER_DATASET(fashionMnist, .flag = "fashion-mnist", .listed_at = 20,
                         .load = load_fashion_mnist, .channels = 1,
                         .norm = Normalization{{kFashionMean}, {kFashionStd}},
                         .class_names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                         "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"})

}  // namespace netspec::data
