// Detection readers on hand-written VOC / COCO files with known boxes, the petsDet mosaic, and
// the synthetic generator: its boxes are the exact extents of the shapes it painted, and the VOC
// and COCO layouts of one seed hold the same boxes.
#include "data/det_data.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/image.h"
#include "data/synth_det.h"
#include "data_test_util.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << s;
}

TEST(DetData, VocXmlWithTwoObjects) {
  const std::string dir = test::tmpdir("voc_xml");
  write(fs::path(dir) / "Annotations" / "a.xml",
        "<annotation><filename>a.jpg</filename><size><width>500</width><height>375</height>"
        "<depth>3</depth></size><object><name>dog</name><pose>Left</pose><bndbox><xmin>48</xmin>"
        "<ymin>240</ymin><xmax>195</xmax><ymax>371</ymax></bndbox></object><object>\n"
        "<name> cat </name><bndbox>\n<xmin>8</xmin><ymin>12.5</ymin><xmax>352</xmax>"
        "<ymax>298</ymax></bndbox></object></annotation>");
  write(fs::path(dir) / "ImageSets" / "Main" / "train.txt", "a\n");
  DetSet s = read_voc(dir, "train");
  ASSERT_EQ(s.records.size(), 1u);
  EXPECT_EQ(s.classes, (std::vector<std::string>{"cat", "dog"}));  // sorted
  const DetRecord& r = s.records[0];
  EXPECT_EQ(r.image, (fs::path(dir) / "JPEGImages" / "a.jpg").string());
  EXPECT_EQ(r.width, 500);
  EXPECT_EQ(r.height, 375);
  ASSERT_EQ(r.boxes.size(), 2u);
  EXPECT_EQ(r.boxes[0], (Box{48, 240, 195, 371, 1}));
  EXPECT_EQ(r.boxes[1], (Box{8, 12.5, 352, 298, 0}));
  // Fixed class list: an unknown name is refused by file.
  EXPECT_NE(test::error_of([&] { read_voc(dir, "", {"bird"}); }).find("unknown class 'dog'"),
            std::string::npos);
  write(fs::path(dir) / "Annotations" / "a.xml",
        "<annotation><filename>a.jpg</filename><object><name>dog</name><bndbox><xmin>x</xmin>"
        "</bndbox></object></annotation>");
  EXPECT_NE(test::error_of([&] { read_voc(dir, ""); }).find("<xmin> is not a number"),
            std::string::npos);
}

TEST(DetData, CocoJsonCategoriesBoxesAndCrowd) {
  const std::string dir = test::tmpdir("coco_json");
  write(fs::path(dir) / "instances_val.json",
        R"({"images": [{"id": 7, "file_name": "x.png", "width": 64, "height": 32},
                       {"id": 9, "file_name": "y.png", "width": 10, "height": 10}],
            "categories": [{"id": 5, "name": "truck"}, {"id": 2, "name": "car"}],
            "annotations": [{"id": 1, "image_id": 7, "category_id": 5, "bbox": [1, 2, 10, 20]},
                            {"id": 2, "image_id": 7, "category_id": 2, "bbox": [0, 0, 3, 4]},
                            {"id": 3, "image_id": 9, "category_id": 2, "bbox": [1, 1, 2, 2],
                             "iscrowd": 1}]})");
  DetSet s = read_coco((fs::path(dir) / "instances_val.json").string(), "/imgs");
  EXPECT_EQ(s.classes, (std::vector<std::string>{"car", "truck"}));  // category-id order
  ASSERT_EQ(s.records.size(), 2u);
  EXPECT_EQ(s.records[0].image, "/imgs/x.png");
  ASSERT_EQ(s.records[0].boxes.size(), 2u);
  EXPECT_EQ(s.records[0].boxes[0], (Box{1, 2, 11, 22, 1}));
  EXPECT_EQ(s.records[0].boxes[1], (Box{0, 0, 3, 4, 0}));
  EXPECT_TRUE(s.records[1].boxes.empty());  // crowd skipped
}

// Per-box extent of the pixels near its class colour must equal the box (boxes that overlap
// another are only checked to contain their pixels).
void expect_synth_boxes_match_pixels(const DetImages& im) {
  const uint8_t col[4][3] = {{220, 40, 40}, {40, 200, 60}, {50, 80, 230}, {230, 200, 40}};
  const int64_t h = im.x.shape()[2], w = im.x.shape()[3];
  int exact = 0;
  for (size_t i = 0; i < im.boxes.size(); ++i)
    for (size_t k = 0; k < im.boxes[i].size(); ++k) {
      const Box& b = im.boxes[i][k];
      bool alone = true;
      for (size_t q = 0; q < im.boxes[i].size(); ++q)
        alone = alone && (q == k || box_iou(b, im.boxes[i][q]) == 0);
      Box e{1e9, 1e9, -1, -1, 0};
      const uint8_t* p = im.x.data<uint8_t>() + i * 3 * h * w;
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          bool near = true;
          for (int c = 0; c < 3; ++c)
            near = near && std::abs(int(p[(c * h + y) * w + x]) - col[b.cls][c]) <= 16;
          if (!near || x < b.x0 || x >= b.x1 || y < b.y0 || y >= b.y1) continue;
          e = {std::min(e.x0, double(x)), std::min(e.y0, double(y)), std::max(e.x1, double(x + 1)),
               std::max(e.y1, double(y + 1)), 0};
        }
      ASSERT_GE(e.x1, 0) << "no pixels for box " << k << " of image " << i;
      if (alone) {
        EXPECT_EQ(e, (Box{b.x0, b.y0, b.x1, b.y1, 0})) << "image " << i << " box " << k;
        ++exact;
      }
    }
  EXPECT_GT(exact, 10);
}

TEST(DetData, SynthVocAndCocoHoldTheSameBoxesOnTheirPixels) {
  const std::string voc = test::tmpdir("synth_voc"), coco = test::tmpdir("synth_coco");
  SynthDetOptions o;
  o.dir = voc;
  o.n = 20;
  o.size = 96;
  o.classes = 4;
  o.seed = 3;
  const int64_t boxes = write_synth_det(o);
  o.dir = coco;
  o.format = "coco";
  EXPECT_EQ(write_synth_det(o), boxes);
  DetSet vt = read_voc(voc, "train", synth_det_classes(4)),
         vv = read_voc(voc, "val", synth_det_classes(4));
  DetSet ct = read_coco(coco + "/annotations/instances_train.json", coco + "/images");
  DetSet cv = read_coco(coco + "/annotations/instances_val.json", coco + "/images");
  ASSERT_EQ(vt.records.size(), 16u);
  ASSERT_EQ(vv.records.size(), 4u);
  ASSERT_EQ(ct.records.size(), 16u);
  EXPECT_EQ(ct.classes, synth_det_classes(4));
  int64_t seen = 0;
  for (size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(vt.records[i].boxes, ct.records[i].boxes) << i;
    seen += int64_t(vt.records[i].boxes.size());
  }
  for (size_t i = 0; i < 4; ++i) seen += int64_t(cv.records[i].boxes.size());
  EXPECT_EQ(seen, boxes);
  // COCO's PNGs hold the drawn pixels exactly; VOC's JPEGImages are real JPEG files (.jpg, FF D8
  // FF) of the same pictures: within JPEG's rounding of them.
  const DetImages cpx = load_det_images(ct, 96, 96), vpx = load_det_images(vt, 96, 96);
  expect_synth_boxes_match_pixels(cpx);
  ASSERT_EQ(vt.records[0].image, voc + "/JPEGImages/000000.jpg");
  std::ifstream jf(vt.records[0].image, std::ios::binary);
  unsigned char magic[3] = {};
  jf.read(reinterpret_cast<char*>(magic), 3);
  EXPECT_TRUE(magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF);
  ASSERT_EQ(vpx.x.shape(), cpx.x.shape());
  double diff = 0;
  int64_t moved = 0;
  for (int64_t i = 0; i < cpx.x.numel(); ++i) {
    const int d = std::abs(int(vpx.x.data<uint8_t>()[i]) - int(cpx.x.data<uint8_t>()[i]));
    diff += d;
    moved += d > 0;
  }
  EXPECT_LT(diff / double(cpx.x.numel()), 8.0);  // the same pictures (the ±8 noise smoothed) ...
  EXPECT_GT(moved, cpx.x.numel() / 10);          // ... through a lossy codec
  // Stretching to another size scales the boxes by the same factors.
  DetImages half = load_det_images(vt, 48, 64, 2);
  ASSERT_EQ(half.x.shape(), (Shape{2, 3, 48, 64}));
  const Box& b = vt.records[1].boxes[0];
  EXPECT_EQ(half.boxes[1][0], (Box{b.x0 * 64 / 96, b.y0 / 2, b.x1 * 64 / 96, b.y1 / 2, b.cls}));
}

TEST(DetData, PetsDetMosaicTilesFourImagesAndTheirBoxes) {
  const std::string dir = test::tmpdir("pets_det");
  SynthDetOptions o;
  o.dir = dir + "/synth";
  o.n = 4;
  o.size = 64;
  o.classes = 2;
  write_synth_det(o);
  // Lay the synthetic VOC set out as Oxford-IIIT Pets: images/*.jpg, annotations/xmls/*.xml with
  // classes cat / dog.
  fs::create_directories(dir + "/annotations/xmls");
  fs::create_directories(dir + "/images");
  for (int i = 0; i < 4; ++i) {
    const std::string id = fmt::format("{:06d}", i);
    fs::copy_file(o.dir + "/JPEGImages/" + id + ".jpg", dir + "/images/" + id + ".jpg");
    std::ifstream in(o.dir + "/Annotations/" + id + ".xml");
    std::string x((std::istreambuf_iterator<char>(in)), {});
    for (auto [from, to] : {std::pair{"<name>rect</name>", "<name>cat</name>"},
                            std::pair{"<name>ellipse</name>", "<name>dog</name>"}})
      for (size_t at; (at = x.find(from)) != std::string::npos;) x.replace(at, strlen(from), to);
    write(fs::path(dir) / "annotations" / "xmls" / (id + ".xml"), x);
  }
  DetSet s = read_pets_det(dir);
  ASSERT_EQ(s.records.size(), 4u);
  DetImages plain = load_det_images(s, 64, 64);
  DetImages mo = load_det_images(s, 128, 128, 0, true);
  ASSERT_EQ(mo.x.shape(), (Shape{4, 3, 128, 128}));
  // Sample 1 = records 1, 2, 3, 0 in the quadrants TL, TR, BL, BR, each 64x64 (no resize).
  size_t at = 0;
  const int64_t ox[4] = {0, 64, 0, 64}, oy[4] = {0, 0, 64, 64};
  for (int q = 0; q < 4; ++q) {
    const size_t src = (1 + q) % 4;
    for (const Box& b : plain.boxes[src]) {
      ASSERT_LT(at, mo.boxes[1].size());
      EXPECT_EQ(mo.boxes[1][at++],
                (Box{b.x0 + ox[q], b.y0 + oy[q], b.x1 + ox[q], b.y1 + oy[q], b.cls}));
    }
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t y = 0; y < 64; y += 7)
        for (int64_t x = 0; x < 64; x += 5)
          ASSERT_EQ(mo.x.data<uint8_t>()[((1 * 3 + c) * 128 + oy[q] + y) * 128 + ox[q] + x],
                    plain.x.data<uint8_t>()[((src * 3 + c) * 64 + y) * 64 + x]);
  }
  EXPECT_EQ(at, mo.boxes[1].size());
}

}  // namespace
}  // namespace netspec::data
