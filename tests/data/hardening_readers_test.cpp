// Hardening of the dataset readers (issue 40): COCO fields of the wrong type name the file and
// the field (they were nlohmann type_errors: "internal error", exit 3); a symbolic-link loop in
// an image folder is named (it was a raw std::filesystem error); an IDX .gz is checked header
// first and inflated no further than its dims declare (a bad header inflated 2.1 GB first).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "core/error.h"
#include "data/det_data.h"
#include "data/idx.h"
#include "data/image.h"
#include "data/image_write.h"
#include "tests/data/idx_fixture.h"
#include "tests/data/image_fixture.h"
#include "tests/error_of.h"
#include "tests/support/test_files.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;
using test_util::error_of;

fs::path fresh_dir(const std::string& name) {
  return netspec::test_util::fresh_dir("hard_readers", name);
}

long max_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// A COCO file whose first annotation (or image) is `ann` (`image`); the rest is valid.
std::string coco(const std::string& ann, const std::string& image = "") {
  return R"({"images": [)" +
         (image.empty() ? R"({"id": 1, "file_name": "a.png", "width": 8, "height": 8})" : image) +
         R"(], "categories": [{"id": 1, "name": "cat"}], "annotations": [)" + ann + "]}";
}

// Item 12: each case once ended as "internal error" (exit 3) without a file or field named.
TEST(CocoHardening, FieldsOfTheWrongTypeNameTheFileAndField) {
  const fs::path d = fresh_dir("coco");
  const std::string p = (d / "instances_train.json").string();
  const std::string good = R"({"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4]})";
  const std::pair<std::string, std::string> cases[] = {
      {coco(R"({"image_id": 1, "category_id": 1, "bbox": ["1", "2", "3", "4"]})"),
       R"(annotations[0].bbox[0] is a string "1" (expected a number))"},
      {coco(R"({"category_id": 1, "bbox": [1, 2, 3, 4]})"), "annotations[0] has no 'image_id'"},
      {coco(R"({"image_id": 1, "category_id": "1", "bbox": [1, 2, 3, 4]})"),
       R"(annotations[0].category_id is a string "1" (expected an integer))"},
      {coco(R"({"image_id": 1, "category_id": 1, "iscrowd": "no", "bbox": [1, 2, 3, 4]})"),
       R"(annotations[0].iscrowd is a string "no" (expected an integer))"},
      {coco(good, R"({"id": 1, "file_name": 123})"),
       "images[0].file_name is a number 123 (expected a string)"},
      {coco("null"), "annotations[0] is null (expected an object)"},
      {coco(good + ", 7"), "annotations[1] is a number 7 (expected an object)"},
      {coco(R"({"image_id": 1.5, "category_id": 1, "bbox": [1, 2, 3, 4]})"),
       "annotations[0].image_id is a number 1.5 (expected an integer)"},
      {coco(R"({"image_id": 1, "category_id": 1, "bbox": {"x": 1}})"),
       R"(annotations[0].bbox is an object {"x":1} (expected [x, y, w, h]))"},
      {coco(good, R"({"id": 1, "file_name": "a.png", "width": "8"})"),
       R"(images[0].width is a string "8" (expected an integer))"},
      {coco(good, R"({"id": 18446744073709551615, "file_name": "a.png"})"),
       "images[0].id is a number 18446744073709551615 (expected an integer that fits 64 bits)"},
      {"[1, 2]", "not a JSON object (got array)"},
  };
  for (const auto& [text, want] : cases) {
    std::ofstream(p) << text;
    const std::string e = error_of([&] { read_coco(p, (d / "images").string()); });
    EXPECT_EQ(e.rfind("[coco] " + p + ": ", 0), 0u) << e;
    EXPECT_NE(e.find(want), std::string::npos) << e;
  }
  std::ofstream(p) << coco(good);
  DetSet s = read_coco(p, (d / "images").string());
  ASSERT_EQ(s.records.size(), 1u);
  ASSERT_EQ(s.records[0].boxes.size(), 1u);
  EXPECT_EQ(s.records[0].boxes[0], (Box{1, 2, 4, 6, 0}));
  EXPECT_EQ(s.records[0].width, 8);
}

// Item 13: a symbolic-link loop among the images, or among the class folders, is named (and so
// are loops where the VOC and IDX readers look for their folders and files).
TEST(ImageFolderHardening, ASymlinkLoopIsNamedNotARawFilesystemError) {
  const fs::path d = fresh_dir("loop");
  fs::create_directories(d / "cat");
  std::vector<uint8_t> px(4 * 4 * 3, 200);
  test::write_png((d / "cat" / "a.png").string(), 4, 4, PNG_FORMAT_RGB, px);
  fs::create_symlink("loop.jpg", d / "cat" / "loop.jpg");  // loop.jpg -> itself
  std::string e = error_of([&] { load_image_folder(d.string(), 4, 4, kImageNetNorm); });
  EXPECT_EQ(e, "[image-folder] " + (d / "cat" / "loop.jpg").string() +
                   ": cannot follow (Too many levels of symbolic links)");
  fs::remove(d / "cat" / "loop.jpg");
  EXPECT_EQ(load_image_folder(d.string(), 4, 4, kImageNetNorm).ds.size(), 1);
  fs::create_symlink("dogs", d / "dogs");  // a class folder that links to itself
  e = error_of([&] { load_image_folder(d.string(), 4, 4, kImageNetNorm); });
  EXPECT_NE(e.find((d / "dogs").string() + ": cannot follow (Too many levels of symbolic links)"),
            std::string::npos)
      << e;
  // A dangling link is no file: skipped, as before.
  fs::remove(d / "dogs");
  fs::create_symlink("absent.png", d / "cat" / "gone.png");
  EXPECT_EQ(load_image_folder(d.string(), 4, 4, kImageNetNorm).ds.size(), 1);
  // The VOC and IDX readers' own look-ups name a looping path the same way.
  fs::create_symlink("Annotations", d / "Annotations");
  EXPECT_EQ(error_of([&] { read_voc(d.string(), ""); }),
            "[voc] " + (d / "Annotations").string() +
                ": cannot follow (Too many levels of symbolic links)");
  fs::create_symlink("train-images-idx3-ubyte.gz", d / "train-images-idx3-ubyte.gz");
  EXPECT_EQ(error_of([&] { load_idx_split(d.string(), true, 0.f, 1.f); }),
            "[idx] " + (d / "train-images-idx3-ubyte.gz").string() +
                ": cannot follow (Too many levels of symbolic links)");
}

// `head` then `zeros` zero bytes, gzip'd in 1 MiB steps (the test itself never holds them).
void write_gz_zeros(const std::string& path, const std::string& head, size_t zeros) {
  gzFile f = gzopen(path.c_str(), "wb1");
  gzwrite(f, head.data(), static_cast<unsigned>(head.size()));
  const std::string mib(1 << 20, '\0');
  for (size_t left = zeros; left > 0;) {
    const size_t n = std::min(left, mib.size());
    gzwrite(f, mib.data(), static_cast<unsigned>(n));
    left -= n;
  }
  gzclose(f);
}

// Item 10: a .gz holding 256 MB was inflated whole before its header was looked at.
TEST(IdxHardening, AGzipIsCheckedHeaderFirstAndInflatedOnlyAsFarAsItsDims) {
  const fs::path d = fresh_dir("idx");
  const std::string bad = (d / "bad.gz").string(), extra = (d / "extra.gz").string();
  write_gz_zeros(bad, std::string("\x01\x00\x08\x03", 4), size_t{256} << 20);
  write_gz_zeros(extra, test::idx_bytes({1000}, std::vector<uint8_t>(1000, 1)), size_t{256} << 20);
  const long before = max_rss_kb();
  std::string e = error_of([&] { read_idx_images(bad); });
  EXPECT_NE(e.find(bad + ": bad magic (got 0100, expected 0000)"), std::string::npos) << e;
  e = error_of([&] { read_idx_labels(extra); });
  EXPECT_NE(e.find(extra + ": trailing bytes (more than the 1008 bytes expected)"),
            std::string::npos)
      << e;
  EXPECT_LT(max_rss_kb() - before, 64 * 1024);  // 256 MB each before
  // Dims the compressed file cannot hold (deflate expands at most ~1032:1) are refused at once.
  const std::string big = (d / "big.gz").string();
  test::write_gz(big, test::idx_bytes({10, 1000, 1000}, {1, 2, 3}));
  const auto size = fs::file_size(big);
  e = error_of([&] { read_idx_images(big); });
  EXPECT_NE(e.find(fmt::format("big.gz: truncated (got a gzip file of {} bytes, which inflates to "
                               "at most {}, the header's dims [10, 1000, 1000] need more)",
                               size, size * 1032 + 1024)),
            std::string::npos)
      << e;
}

// Item 14: a box is clipped to its image (annotations overshoot by a pixel), but one with a
// non-finite coordinate, or wholly outside the image, is refused naming the image and box
// (COCO [-500, -500, 20, 20] and VOC's likewise were trained on silently).
TEST(DetHardening, BoxesAreClippedAndOutsideOrNonFiniteOnesRefused) {
  const fs::path d = fresh_dir("boxes");
  const std::string img = (d / "a.png").string();
  write_png_rgb(img, Tensor(DType::kUI8, {3, 20, 40}));  // 40 wide, 20 high
  DetSet set;
  set.classes = {"thing"};
  set.records.push_back({img, 40, 20, {{-2, 5, 10, 25, 0}, {30, 0, 41, 10, 0}}});
  DetImages ok = load_det_images(set, 10, 20);  // scale 0.5 both ways
  ASSERT_EQ(ok.boxes.size(), 1u);
  ASSERT_EQ(ok.boxes[0].size(), 2u);
  EXPECT_EQ(ok.boxes[0][0], (Box{0, 2.5, 5, 10, 0}));  // clipped at x 0 and y 20
  EXPECT_EQ(ok.boxes[0][1], (Box{15, 0, 20, 5, 0}));   // clipped at x 40
  set.records[0].boxes.push_back({-500, -500, -480, -480, 0});
  std::string e = error_of([&] { load_det_images(set, 10, 20); });
  EXPECT_NE(e.find(img + ": box 2 ([-500, -500, -480, -480]) lies outside the 40x20 image"),
            std::string::npos)
      << e;
  set.records[0].boxes.back() = {1, 1, std::numeric_limits<double>::infinity(), 5, 0};
  e = error_of([&] { load_det_images(set, 10, 20); });
  EXPECT_NE(e.find(img + ": box 2 has a non-finite coordinate ([1, 1, inf, 5])"), std::string::npos)
      << e;
}

// Item 14: a commented-out <object> is not read (it became a class of its own), an
// <object id="1"> with attributes is (it was ignored), and a COCO key given twice is refused
// (the last one won silently).
TEST(DetHardening, VocCommentsAndAttributesAndCocoDuplicateKeys) {
  const fs::path d = fresh_dir("vocxml");
  const std::string x = (d / "a.xml").string();
  std::ofstream(x) << R"(<annotation><filename>a.png</filename>
    <size><width>40</width><height>20</height><depth>3</depth></size>
    <!-- <object><name>ghost</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax>
         <ymax>5</ymax></bndbox></object> -->
    <object id="1"><name>cat</name><bndbox><xmin>2</xmin><ymin>3</ymin><xmax>12</xmax>
      <ymax>13</ymax></bndbox></object>
    <object><name>dog</name><bndbox><xmin>20</xmin><ymin>1</ymin><xmax>30</xmax>
      <ymax>9</ymax></bndbox></object>
  </annotation>)";
  std::vector<std::string> classes;
  DetRecord r = read_voc_xml(x, d.string(), classes);
  EXPECT_EQ(classes, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(r.boxes.size(), 2u);
  EXPECT_EQ(r.boxes[0], (Box{2, 3, 12, 13, 0}));
  EXPECT_EQ(r.boxes[1], (Box{20, 1, 30, 9, 1}));
  std::ofstream(x) << "<annotation><filename>a.png</filename><!-- open";
  EXPECT_NE(error_of([&] { read_voc_xml(x, d.string(), classes); }).find("unterminated <!--"),
            std::string::npos);
  const std::string p = (d / "instances_train.json").string();
  std::ofstream(p) << coco(R"({"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4],
                               "bbox": [-500, -500, 20, 20]})");
  const std::string e = error_of([&] { read_coco(p, (d / "images").string()); });
  EXPECT_NE(e.find(p + ": duplicate key 'bbox'"), std::string::npos) << e;
  std::ofstream(p) << coco(R"({"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4]})");
  EXPECT_EQ(read_coco(p, (d / "images").string()).records.at(0).boxes.size(), 1u);
}

}  // namespace
}  // namespace netspec::data
