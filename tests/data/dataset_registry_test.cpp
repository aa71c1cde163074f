// The dataset descriptors (src/data/<name>_dataset.cpp): one per DatasetKind, and the public
// functions of datasets.h give what the per-kind switches gave before the registry.
#include "data/dataset_registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "data/data_test_util.h"
#include "data/idx_fixture.h"

namespace netspec::data {
namespace {

using test::error_of;

std::vector<DatasetKind> all_kinds() {
  std::vector<DatasetKind> out;
  for (std::string_view n : EnumTraits<DatasetKind>::kNames)
    out.push_back(*parse_enum<DatasetKind>(n));
  return out;
}

TEST(DatasetRegistry, EveryKindHasItsOwnLoadableDescriptor) {
  const auto kinds = all_kinds();
  ASSERT_GE(kinds.size(), 14u);
  ASSERT_EQ(dataset_descriptors().size(), kinds.size());
  for (DatasetKind k : kinds) {
    const DatasetDescriptor* d = find_dataset_descriptor(k);
    ASSERT_NE(d, nullptr) << enum_name(k);
    EXPECT_EQ(d->kind, k) << enum_name(k);
    EXPECT_NE(d->load, nullptr) << enum_name(k);
    EXPECT_EQ(dataset_flag_name(k), d->flag);
    // A kind without fixed names says where its classes come from, and only then.
    EXPECT_NE(d->class_names.empty(), std::string(d->classes_from).empty()) << enum_name(k);
  }
  EXPECT_EQ(dataset_flag_name(DatasetKind::fashionMnist), "fashion-mnist");
  EXPECT_EQ(dataset_flag_name(DatasetKind::petsDet), "pets-det");
  EXPECT_EQ(dataset_flag_name(DatasetKind::brats224), "brats224");
}

// The order `train --help` and the "expected one of" messages have always listed (a new kind
// may come anywhere among them).
TEST(DatasetRegistry, LoadableListKeepsItsOrder) {
  const std::vector<std::string> before = {
      "mnist", "fashion-mnist", "cifar10", "imagenette", "imagenet", "folder",   "csv",
      "pets",  "pets-det",      "voc",     "coco",       "brats",    "brats224", "text"};
  std::vector<std::string> listed;
  for (DatasetKind k : loadable_datasets()) {
    const std::string f = dataset_flag_name(k);
    if (std::find(before.begin(), before.end(), f) != before.end()) listed.push_back(f);
  }
  EXPECT_EQ(listed, before);
  EXPECT_EQ(loadable_datasets().size(), dataset_descriptors().size());  // every one has a loader
}

TEST(DatasetRegistry, FixedClassDatasetsKeepTheirNormalisationAndNames) {
  Normalization n = dataset_normalization(DatasetKind::fashionMnist);
  EXPECT_EQ(n.mean, std::vector<float>{0.2860f});
  EXPECT_EQ(n.std, std::vector<float>{0.3530f});
  EXPECT_EQ(dataset_class_names(DatasetKind::fashionMnist),
            (std::vector<std::string>{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                      "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}));
  n = dataset_normalization(DatasetKind::mnist);
  EXPECT_EQ(n.mean, std::vector<float>{0.1307f});
  EXPECT_EQ(n.std, std::vector<float>{0.3081f});
  EXPECT_EQ(
      dataset_class_names(DatasetKind::mnist),
      (std::vector<std::string>{"0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
                                "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"}));
  n = dataset_normalization(DatasetKind::cifar10);
  EXPECT_EQ(n.mean, (std::vector<float>{0.4914f, 0.4822f, 0.4465f}));
  EXPECT_EQ(n.std, (std::vector<float>{0.2470f, 0.2435f, 0.2616f}));
  EXPECT_EQ(dataset_class_names(DatasetKind::cifar10),
            (std::vector<std::string>{"airplane", "automobile", "bird", "cat", "deer", "dog",
                                      "frog", "horse", "ship", "truck"}));
  for (DatasetKind k :
       {DatasetKind::imagenette, DatasetKind::imagenet, DatasetKind::folder, DatasetKind::pets,
        DatasetKind::petsDet, DatasetKind::voc, DatasetKind::coco}) {
    n = dataset_normalization(k);
    EXPECT_EQ(n.mean, (std::vector<float>{0.485f, 0.456f, 0.406f})) << enum_name(k);
    EXPECT_EQ(n.std, (std::vector<float>{0.229f, 0.224f, 0.225f})) << enum_name(k);
    EXPECT_NE(error_of([&] { dataset_class_names(k); }).find("has no fixed class list"),
              std::string::npos)
        << enum_name(k);
  }
  for (DatasetKind k :
       {DatasetKind::text, DatasetKind::csv, DatasetKind::brats, DatasetKind::brats224})
    EXPECT_NE(error_of([&] {
                dataset_normalization(k);
              }).find("dataset " + std::string(enum_name(k)) + " is not an image dataset"),
              std::string::npos)
        << enum_name(k);
}

TEST(DatasetRegistry, DefaultAugmentAndChannels) {
  const Augment m = standard_augment(DatasetKind::mnist);  // a mirrored digit is another glyph
  EXPECT_TRUE(m.crop);
  EXPECT_EQ(m.pad, 2);
  EXPECT_FALSE(m.flip);
  for (DatasetKind k :
       {DatasetKind::fashionMnist, DatasetKind::cifar10, DatasetKind::imagenette, DatasetKind::pets,
        DatasetKind::petsDet, DatasetKind::brats, DatasetKind::brats224, DatasetKind::imagenet,
        DatasetKind::folder, DatasetKind::csv, DatasetKind::voc, DatasetKind::coco}) {
    const Augment a = standard_augment(k);
    EXPECT_TRUE(a.crop && a.flip && a.pad == -1 && !a.rand_augment && !a.auto_augment)
        << enum_name(k);
  }
  EXPECT_EQ(error_of([] { standard_augment(DatasetKind::text); }),
            "[data] augment is not defined for text (token windows cannot be cropped or flipped)");
  EXPECT_EQ(dataset_descriptor(DatasetKind::fashionMnist).channels, 1);
  EXPECT_EQ(dataset_descriptor(DatasetKind::cifar10).channels, 3);
  EXPECT_EQ(dataset_descriptor(DatasetKind::voc).channels, 3);
  EXPECT_EQ(dataset_descriptor(DatasetKind::brats224).channels, 4);
  EXPECT_EQ(dataset_descriptor(DatasetKind::folder).channels, -1);  // the net's
  EXPECT_EQ(dataset_descriptor(DatasetKind::text).channels, 0);
}

// load_dataset goes through the descriptor's loader and fills the fixed class names.
TEST(DatasetRegistry, MnistLoadsThroughItsDescriptor) {
  const std::string d = test::tmpdir("registry_mnist");
  test::write_synthetic_split(d, "train", 20, 3);
  test::write_synthetic_split(d, "t10k", 6, 4);
  LoadOptions o;
  o.dir = d;
  o.limit = 5;
  const Splits s = load_dataset(DatasetKind::mnist, o);
  EXPECT_EQ(s.train.size(), 5);
  EXPECT_EQ(s.test.size(), 6);
  EXPECT_EQ(s.class_names, dataset_class_names(DatasetKind::mnist));
  EXPECT_EQ(s.train.x.dtype(), DType::kUI8);
  ASSERT_EQ(s.train.pixel_values.size(), 256u);
  EXPECT_FLOAT_EQ(s.train.pixel_values[0], -0.1307f / 0.3081f);
}

TEST(DatasetRegistryDeathTest, BadRegistrationsAbort) {
  EXPECT_DEATH(DatasetRegistrar({.kind = DatasetKind::mnist, .flag = "mnist"}),
               "bad dataset registration 'mnist' \\(registered twice\\)");
  EXPECT_DEATH(DatasetRegistrar({.kind = DatasetKind::fashionMnist, .flag = "fashionmnist"}),
               "flag is not the kebab-case kind name");
  EXPECT_DEATH(DatasetRegistrar({.kind = DatasetKind::csv, .flag = "csv", .augment = {}}),
               "augment refused without a reason");
}

}  // namespace
}  // namespace netspec::data
