// Named datasets (see datasets.h).
#include "data/datasets.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "data/brats.h"
#include "data/cifar.h"
#include "data/det_data.h"
#include "data/image.h"
#include "data/own_data.h"
#include "data/pets.h"

namespace netspec::data {

Dataset take_first(const Dataset& ds, int64_t n) {
  if (n >= ds.size()) return ds;
  std::vector<int64_t> rows(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = i;
  return take_rows(ds, rows);
}

Dataset take_rows(const Dataset& ds, const std::vector<int64_t>& rows) {
  const auto n = static_cast<int64_t>(rows.size());
  Shape xs = ds.x.shape(), ys = ds.y.shape();
  xs[0] = ys[0] = n;
  Dataset o{Tensor(ds.x.dtype(), xs), Tensor(ds.y.dtype(), ys), ds.mean, ds.std, ds.black};
  const size_t xr = ds.size() ? ds.x.nbytes() / static_cast<size_t>(ds.size()) : 0;
  const size_t yr = ds.size() ? ds.y.nbytes() / static_cast<size_t>(ds.size()) : 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = rows[static_cast<size_t>(i)];
    if (r < 0 || r >= ds.size())
      fail("data", "row out of range (got {}, expected < {})", r, ds.size());
    std::memcpy(static_cast<uint8_t*>(o.x.raw()) + i * xr,
                static_cast<const uint8_t*>(ds.x.raw()) + r * xr, xr);
    std::memcpy(static_cast<uint8_t*>(o.y.raw()) + i * yr,
                static_cast<const uint8_t*>(ds.y.raw()) + r * yr, yr);
  }
  return o;
}

std::vector<std::string> dataset_class_names(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::fashionMnist:
      return {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
              "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
    case DatasetKind::mnist:
      return {"0 - zero", "1 - one", "2 - two",   "3 - three", "4 - four",
              "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"};
    case DatasetKind::cifar10:
      return {"airplane", "automobile", "bird",  "cat",  "deer",
              "dog",      "frog",       "horse", "ship", "truck"};
    default:
      fail("data", "dataset {} has no fixed class list (its classes come from its files)",
           enum_name(kind));
  }
}

Augment standard_augment(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::mnist:
      return Augment{true, 2, false};
    case DatasetKind::text:
      fail("data", "augment is not defined for text (token windows cannot be cropped or flipped)");
    default:
      return Augment::standard();
  }
}

Normalization dataset_normalization(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::fashionMnist:
      return {{kFashionMean}, {kFashionStd}};
    case DatasetKind::mnist:
      return {{kMnistMean}, {kMnistStd}};
    case DatasetKind::cifar10:
      return kCifar10Norm;
    case DatasetKind::imagenette:
    case DatasetKind::imagenet:
    case DatasetKind::pets:
    case DatasetKind::petsDet:
    case DatasetKind::voc:
    case DatasetKind::coco:
    case DatasetKind::folder:
      return kImageNetNorm;
    default:
      fail("data", "dataset {} is not an image dataset", enum_name(kind));
  }
}

std::vector<DatasetKind> loadable_datasets() {
  return {DatasetKind::mnist,      DatasetKind::fashionMnist, DatasetKind::cifar10,
          DatasetKind::imagenette, DatasetKind::imagenet,     DatasetKind::folder,
          DatasetKind::csv,        DatasetKind::pets,         DatasetKind::petsDet,
          DatasetKind::voc,        DatasetKind::coco,         DatasetKind::brats,
          DatasetKind::brats224,   DatasetKind::text};
}

std::string dataset_flag_name(DatasetKind kind) {
  std::string out;
  for (char c : std::string(enum_name(kind)))
    if (std::isupper(static_cast<unsigned char>(c)))
      out += std::string("-") + static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else
      out += c;
  return out;
}

std::string loadable_dataset_names(const std::string& sep) {
  std::string out;
  for (DatasetKind k : loadable_datasets()) out += (out.empty() ? "" : sep) + dataset_flag_name(k);
  return out;
}

Splits load_dataset(DatasetKind kind, const LoadOptions& o) {
  const auto loadable = loadable_datasets();
  if (std::find(loadable.begin(), loadable.end(), kind) == loadable.end())
    fail("data", "dataset {} is not supported yet (have: {})", enum_name(kind),
         loadable_dataset_names(", "));
  Splits s;
  namespace fs = std::filesystem;
  if (kind == DatasetKind::fashionMnist || kind == DatasetKind::mnist) {
    bool f = kind == DatasetKind::fashionMnist;
    std::string d = !o.dir.empty() ? o.dir
                    : f            ? std::string(kFashionMnistDir)
                                   : std::string("/usr/share/datasets/mnist");
    float mean = f ? kFashionMean : kMnistMean;
    float sd = f ? kFashionStd : kMnistStd;
    s.train = load_idx_split(d, true, mean, sd);
    s.test = load_idx_split(d, false, mean, sd);
    s.class_names = dataset_class_names(kind);
  } else if (kind == DatasetKind::cifar10) {
    s.train = load_cifar10_split(o.dir, true);
    s.test = load_cifar10_split(o.dir, false);
    s.class_names = dataset_class_names(kind);
  } else if (kind == DatasetKind::imagenette) {
    if (o.dir.empty())
      fail("imagenette",
           "no data directory: pass --data DIR with DIR/train/<class>/*.JPEG and "
           "DIR/val/<class>/*.JPEG (e.g. imagenette2-320 unpacked)");
    ImageFolder tr = load_image_folder((fs::path(o.dir) / "train").string(), o.height, o.width,
                                       kImageNetNorm, o.limit);
    ImageFolder va = load_image_folder((fs::path(o.dir) / "val").string(), o.height, o.width,
                                       kImageNetNorm, 0, tr.classes, o.test_crop_ratio);
    s.train = std::move(tr.ds);
    s.test = std::move(va.ds);
    s.class_names = std::move(tr.classes);
    return s;  // the limit was applied while listing
  } else if (kind == DatasetKind::petsDet || kind == DatasetKind::voc ||
             kind == DatasetKind::coco) {
    return load_det_splits(kind, o);
  } else if (kind == DatasetKind::pets) {
    if (o.dir.empty())
      fail("pets",
           "no data directory: pass --data DIR with the Oxford-IIIT Pets layout (DIR/images, "
           "DIR/annotations/trimaps, DIR/annotations/trainval.txt, test.txt), e.g. from "
           "`netspec data synth --task seg --format pets --n 400 -o DIR`");
    s.train = load_pets_split(o.dir, "trainval", o.height, o.width, o.limit).ds;
    s.test = load_pets_split(o.dir, "test", o.height, o.width).ds;
    s.class_names = kPetsClasses;
    return s;  // the limit was applied while listing
  } else if (kind == DatasetKind::brats || kind == DatasetKind::brats224) {
    if (o.dir.empty())
      fail("brats",
           "no data directory: pass --data DIR with MSD Task01_BrainTumour (DIR/dataset.json, "
           "imagesTr, labelsTr), e.g. from `netspec data synth --task seg --format brats --n 10 "
           "-o DIR`");
    const int64_t size = kind == DatasetKind::brats ? 240 : 224;
    if (o.height != size || o.width != size)
      fail("brats", "{} slices are {}x{} (got a net input of {}x{})", enum_name(kind), size, size,
           o.height, o.width);
    BratsSplits b = load_brats(o.dir, size, size, o.limit);
    s.train = std::move(b.train);
    s.test = std::move(b.test);
    s.class_names = kBratsClasses;
    return s;
  } else if (kind == DatasetKind::folder || kind == DatasetKind::imagenet) {
    return load_image_folder_dataset(o.dir, o.channels, o.height, o.width, o.limit,
                                     o.test_crop_ratio);  // the limit was applied while listing
  } else if (kind == DatasetKind::csv) {
    return load_csv_dataset(o.dir, o.limit);
  } else if (kind == DatasetKind::text) {
    auto c = std::make_shared<TextCorpus>(load_text(o.dir));
    s.train = text_windows(*c, true, o.seq_len, o.seed, 0);
    s.test = text_windows(*c, false, o.seq_len, o.seed, 0);
    for (char32_t ch : c->vocab.chars) s.class_names.push_back(encode_utf8(std::u32string(1, ch)));
    s.text = std::move(c);
  } else {  // listed in loadable_datasets() without a reader here
    fail("data", "dataset kind {} has no reader", static_cast<int>(kind));
  }
  if (o.limit > 0) s.train = take_first(s.train, o.limit);
  return s;
}

Splits load_dataset(DatasetKind kind, const std::string& dir, int64_t limit) {
  LoadOptions o;
  o.dir = dir;
  o.limit = limit;
  return load_dataset(kind, o);
}

}  // namespace netspec::data
