// ImageNet's flat validation folder with a labels file (data/flat_val.h) through the folder reader,
// its refusals naming file, line and label, and the datasets load_dataset reads (the list
// `train --help` shows) against the ones it refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "data/datasets.h"
#include "data/image_fixture.h"
#include "data/own_data.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

// An 8x8 RGB PNG of one grey level.
void png(const fs::path& p, int level) {
  fs::create_directories(p.parent_path());
  test::write_png(p.string(), 8, 8, PNG_FORMAT_RGB, std::vector<uint8_t>(8 * 8 * 3, level));
}

// DIR/train/{cat,dog}/*.png and DIR/val/v1..v3.png flat; the grey level is 50 for cat, 200 dog.
fs::path imagenet_tree(const std::string& name, const std::string& labels) {
  fs::path d = fs::temp_directory_path() / (name + std::to_string(getpid()));
  fs::remove_all(d);
  png(d / "train" / "cat" / "a.png", 50);
  png(d / "train" / "cat" / "b.png", 50);
  png(d / "train" / "dog" / "a.png", 200);
  png(d / "val" / "v1.png", 200);
  png(d / "val" / "v2.png", 50);
  png(d / "val" / "v3.png", 200);
  std::ofstream(d / "val_labels.txt") << labels;
  return d;
}

void expect_error(const fs::path& d, const std::string& what) {
  try {
    load_image_folder_dataset(d.string(), 3, 8, 8, 0, 1.0);
    ADD_FAILURE() << "expected an error mentioning '" << what << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(FlatVal, LabelsFileGivesEachImageItsClass) {
  // A header, a comment, a Kaggle-style line (class then boxes), names with and without the
  // extension, blank lines, and a label of an image that is not there (ignored).
  fs::path d = imagenet_tree("ns_flatval_ok",
                             "ImageId,PredictionString\n# val labels\nv1,dog 1 2 3 4\n\n"
                             "v2.png cat\nv3\tdog\ngone.png cat\n");
  Splits s = load_image_folder_dataset(d.string(), 3, 8, 8, 0, 1.0);
  EXPECT_EQ(s.class_names, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(s.test.size(), 3);
  EXPECT_EQ(s.test.x.shape(), (Shape{3, 3, 8, 8}));
  const int32_t* y = s.test.y.data<int32_t>();
  const uint8_t* x = s.test.x.data<uint8_t>();
  // v1, v2, v3 in name order: dog, cat, dog; and each image is the one its label names.
  EXPECT_EQ(y[0], 1);
  EXPECT_EQ(y[1], 0);
  EXPECT_EQ(y[2], 1);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(x[i * 192], y[i] ? 200 : 50) << i;
  fs::remove_all(d);
}

TEST(FlatVal, RefusalsNameFileLineAndLabel) {
  fs::path cow = imagenet_tree("ns_flatval_cow", "v1 dog\nv2 cow\nv3 dog\n");
  expect_error(cow, "val_labels.txt:2: label 'cow' of v2 is not a training class");
  fs::path missing = imagenet_tree("ns_flatval_missing", "v1 dog\nv2 cat\n");
  expect_error(missing, "no label for v3.png in");
  fs::path twice = imagenet_tree("ns_flatval_twice", "v1 dog\nv2 cat\nv3 dog\nv1.png cat\n");
  expect_error(twice, "val_labels.txt:4: v1.png labelled 'cat' here and 'dog' on line 1");
  fs::path none = imagenet_tree("ns_flatval_none", "");
  fs::remove(none / "val_labels.txt");
  expect_error(none, "no labels file was found");
  for (const auto& p : {cow, missing, twice, none}) fs::remove_all(p);
}

// Every loadable kind gets past load_dataset's dispatch (failing on the missing directory
// instead); every other kind is refused as not supported, naming the loadable ones.
TEST(FlatVal, LoadableDatasetsAreExactlyTheOnesLoadDatasetReads) {
  const auto loadable = loadable_datasets();
  LoadOptions o;
  o.dir = "/nonexistent/netspec-data";
  o.height = o.width = 8;
  o.seq_len = 4;
  for (std::string_view name : EnumTraits<DatasetKind>::kNames) {
    const DatasetKind k = *parse_enum<DatasetKind>(std::string(name));
    const bool listed = std::find(loadable.begin(), loadable.end(), k) != loadable.end();
    std::string err;
    try {
      load_dataset(k, o);
    } catch (const Error& e) {
      err = e.what();
    }
    EXPECT_EQ(err.find("not supported yet") == std::string::npos, listed) << name << ": " << err;
  }
  EXPECT_EQ(dataset_flag_name(DatasetKind::fashionMnist), "fashion-mnist");
  EXPECT_NE(loadable_dataset_names(" | ").find("mnist | fashion-mnist | cifar10"),
            std::string::npos);
}

}  // namespace
}  // namespace netspec::data
