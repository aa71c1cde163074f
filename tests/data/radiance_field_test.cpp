// radianceField: camera rays against the pinhole closed form, the exact renderer against
// closed-form colours of spheres and boxes of constant density, the procedural dataset's layout
// through load_dataset, and the transforms.json reader on small generated folders (RGBA over the
// background; every malformed field named with its file).
#include <gtest/gtest.h>
#include <png.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "data/dataset_registry.h"
#include "data/radiance_field.h"
#include "data/synth.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

TEST(RadianceField, CameraRaysFollowThePinholeConvention) {
  // Camera on +x looking at the origin: right = +y, up = +z, forward = -x.
  const double ax = 2 * std::atan(0.5);  // focal = 0.5·W / tan(ax/2) = W
  const Camera cam = look_at({4, 0, 0}, {0, 0, 0}, ax);
  const Tensor one = camera_rays(cam, 1, 1);
  const float* r = one.data<float>();
  EXPECT_FLOAT_EQ(r[0], 4);
  EXPECT_FLOAT_EQ(r[1], 0);
  EXPECT_FLOAT_EQ(r[3], -1);
  EXPECT_NEAR(r[4], 0, 1e-7);
  // 2x2, focal 2: pixel (0, 0) (top left) looks along (-1, -0.25, +0.25)/|.|; pixel (1, 1) along
  // (-1, +0.25, -0.25)/|.| (image right is world +y; image down is world -z).
  const Tensor four = camera_rays(cam, 2, 2);
  const double n = std::sqrt(1 + 2 * 0.0625);
  const float* tl = four.data<float>();
  const float* br = four.data<float>() + 3 * 6;
  EXPECT_NEAR(tl[3], -1 / n, 1e-6);
  EXPECT_NEAR(tl[4], -0.25 / n, 1e-6);
  EXPECT_NEAR(tl[5], 0.25 / n, 1e-6);
  EXPECT_NEAR(br[4], 0.25 / n, 1e-6);
  EXPECT_NEAR(br[5], -0.25 / n, 1e-6);
}

TEST(RadianceField, ExactRenderMatchesClosedForms) {
  const Vec3 o = {4, 0, 0}, d = {-1, 0, 0};
  Scene one{{{false, {0, 0, 0}, 0.5, {1, 0, 0}, 3}}};
  // Through the centre: chord 1, opacity a = 1 - e^{-3}; white behind.
  Vec3 c = render_exact(one, o, d, 2, 6, 1);
  const double t = std::exp(-3.0);
  EXPECT_NEAR(c[0], 1, 1e-12);
  EXPECT_NEAR(c[1], t, 1e-12);
  // Off axis at height b = 0.3: chord 2·√(r² - b²) = 0.8.
  c = render_exact(one, {4, 0, 0.3}, d, 2, 6, 0);
  EXPECT_NEAR(c[0], 1 - std::exp(-3 * 0.8), 1e-12);
  EXPECT_NEAR(c[2], 0, 1e-12);
  // Missed: the background alone.
  c = render_exact(one, {4, 0, 0.6}, d, 2, 6, 0.25);
  EXPECT_DOUBLE_EQ(c[1], 0.25);
  // Two spheres in a row: the front one's colour, then the back one's through its transmittance.
  Scene two{{{false, {0.5, 0, 0}, 0.25, {0, 1, 0}, 2}, {false, {-0.5, 0, 0}, 0.25, {0, 0, 1}, 4}}};
  c = render_exact(two, o, d, 2, 6, 0);
  const double a1 = 1 - std::exp(-2 * 0.5), a2 = 1 - std::exp(-4 * 0.5);
  EXPECT_NEAR(c[1], a1, 1e-12);
  EXPECT_NEAR(c[2], (1 - a1) * a2, 1e-12);
  // The same sphere twice: density 2σ, its colour.
  Scene twice{{one.blobs[0], one.blobs[0]}};
  c = render_exact(twice, o, d, 2, 6, 0);
  EXPECT_NEAR(c[0], 1 - std::exp(-6.0), 1e-12);
  // A box of half-size 0.5 crossed along x: chord 1; sampling cut at far = 3.8 leaves 0.3 of it.
  Scene box{{{true, {0, 0, 0}, 0.5, {0, 0, 1}, 2}}};
  EXPECT_NEAR(render_exact(box, o, d, 2, 6, 0)[2], 1 - std::exp(-2.0), 1e-12);
  EXPECT_NEAR(render_exact(box, o, d, 2, 3.8, 0)[2], 1 - std::exp(-2 * 0.3), 1e-12);
}

TEST(RadianceField, ProceduralDatasetHoldsRaysAndTheirExactColours) {
  LoadOptions lo;
  lo.background = 1;
  const Splits s = load_dataset(DatasetKind::radianceField, lo);
  ASSERT_TRUE(s.views);
  EXPECT_EQ(s.views->height, 32);
  EXPECT_EQ(s.views->train_views, 30);
  EXPECT_EQ(s.views->test_views, 4);
  EXPECT_EQ(s.train.x.shape(), (Shape{30 * 1024, 6}));
  EXPECT_EQ(s.train.y.shape(), (Shape{30 * 1024, 3}));
  EXPECT_EQ(s.test.x.shape(), (Shape{4 * 1024, 6}));
  int64_t background = 0, coloured = 0;
  for (int64_t i = 0; i < s.test.size(); ++i) {
    const float* r = s.test.x.data<float>() + i * 6;
    EXPECT_NEAR(std::hypot(r[0], r[1], r[2]), 4, 1e-5);
    EXPECT_NEAR(std::hypot(r[3], r[4], r[5]), 1, 1e-6);
    const float* y = s.test.y.data<float>() + i * 3;
    const Vec3 want = render_exact(procedural_scene(), {r[0], r[1], r[2]}, {r[3], r[4], r[5]}, 2,
                                   6, 1);
    EXPECT_FLOAT_EQ(y[1], float(want[1]));
    background += y[0] == 1 && y[1] == 1 && y[2] == 1;
    coloured += y[0] < 0.5 || y[1] < 0.5 || y[2] < 0.5;
  }
  // The scene fills part of each view: both misses and hits.
  EXPECT_GT(background, 1000);
  EXPECT_GT(coloured, 500);
  lo.limit = 1000;  // evenly strided over every view
  const Splits few = load_dataset(DatasetKind::radianceField, lo);
  EXPECT_EQ(few.train.size(), 1000);
  EXPECT_EQ(few.train.x.data<float>()[999 * 6], s.train.x.data<float>()[(1999 * 30720 / 2000) * 6]);
  EXPECT_EQ(dataset_descriptor(DatasetKind::radianceField).flag, std::string("radiance-field"));
}

// A width x height RGBA PNG whose pixel i is (r, g, b, a).
void write_rgba(const fs::path& p, int width, int height, uint8_t r, uint8_t g, uint8_t b,
                uint8_t a) {
  std::vector<uint8_t> px;
  for (int i = 0; i < width * height; ++i) px.insert(px.end(), {r, g, b, a});
  png_image im{};
  im.version = PNG_IMAGE_VERSION;
  im.width = unsigned(width), im.height = unsigned(height);
  im.format = PNG_FORMAT_RGBA;
  ASSERT_TRUE(png_image_write_to_file(&im, p.c_str(), 0, px.data(), 0, nullptr)) << p;
}

const char* kPose = R"([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 4], [0, 0, 0, 1]])";

// DIR with transforms_train.json (2 frames) and transforms_test.json (1 frame), 4x3 images.
fs::path nerf_folder(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("nerf_folder_" + name);
  fs::remove_all(d);
  fs::create_directories(d / "train");
  fs::create_directories(d / "test");
  write_rgba(d / "train" / "r_0.png", 4, 3, 255, 0, 0, 255);
  write_rgba(d / "train" / "r_1.png", 4, 3, 0, 0, 255, 51);  // alpha 0.2
  write_rgba(d / "test" / "r_0.png", 4, 3, 0, 255, 0, 255);
  std::ofstream(d / "transforms_train.json")
      << R"({"camera_angle_x": 0.69, "frames": [{"file_path": "./train/r_0", "transform_matrix": )"
      << kPose << R"(}, {"file_path": "./train/r_1.png", "transform_matrix": )" << kPose << "}]}";
  std::ofstream(d / "transforms_test.json")
      << R"({"camera_angle_x": 0.69, "frames": [{"file_path": "./test/r_0", "transform_matrix": )"
      << kPose << "}]}";
  return d;
}

TEST(RadianceField, TransformsFolderLoadsPosedViews) {
  const fs::path d = nerf_folder("good");
  LoadOptions lo;
  lo.dir = d.string();
  lo.background = 1;
  const Splits s = load_dataset(DatasetKind::radianceField, lo);
  ASSERT_TRUE(s.views);
  EXPECT_EQ(s.views->width, 4);
  EXPECT_EQ(s.views->height, 3);
  EXPECT_EQ(s.train.size(), 24);
  EXPECT_EQ(s.test.size(), 12);
  // Identity rotation at z = 4: rays start at (0, 0, 4) and look down -z.
  EXPECT_FLOAT_EQ(s.train.x.data<float>()[2], 4);
  EXPECT_LT(s.train.x.data<float>()[5], -0.9f);
  // Frame 0 opaque red; frame 1 blue at alpha 0.2 over white: (0.8, 0.8, 1).
  EXPECT_FLOAT_EQ(s.train.y.data<float>()[0], 1);
  EXPECT_FLOAT_EQ(s.train.y.data<float>()[1], 0);
  EXPECT_NEAR(s.train.y.data<float>()[12 * 3 + 0], 0.8, 1e-6);
  EXPECT_NEAR(s.train.y.data<float>()[12 * 3 + 2], 1.0, 1e-6);
  EXPECT_FLOAT_EQ(s.test.y.data<float>()[1], 1);  // green
  lo.background = 0;  // over black: (0, 0, 0.2)
  EXPECT_NEAR(load_dataset(DatasetKind::radianceField, lo).train.y.data<float>()[12 * 3 + 2], 0.2,
              1e-6);
}

std::string load_error(const fs::path& d) {
  LoadOptions lo;
  lo.dir = d.string();
  try {
    load_dataset(DatasetKind::radianceField, lo);
  } catch (const Error& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(RadianceField, TransformsErrorsNameTheFileAndField) {
  const fs::path d = nerf_folder("bad");
  const std::string train = (d / "transforms_train.json").string();
  auto rewrite = [&](const std::string& frames, const std::string& angle = "0.69") {
    std::ofstream(train) << R"({"camera_angle_x": )" << angle << R"(, "frames": )" << frames
                         << "}";
  };
  auto has = [](const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
  };
  const std::string good = std::string(R"({"file_path": "./train/r_0", "transform_matrix": )") +
                           kPose + "}";
  rewrite("[" + good + "]", "\"wide\"");
  EXPECT_TRUE(has(load_error(d), train + ": camera_angle_x must be a number of radians"))
      << load_error(d);
  std::ofstream(train) << R"({"frames": [])" << "}";
  EXPECT_TRUE(has(load_error(d), train + ": camera_angle_x is missing")) << load_error(d);
  rewrite("[]");
  EXPECT_TRUE(has(load_error(d), train + ": frames must be a non-empty array")) << load_error(d);
  rewrite("[" + good + R"(, {"transform_matrix": )" + kPose + "}]");
  EXPECT_TRUE(has(load_error(d), train + ": frames[1].file_path must be a non-empty string"))
      << load_error(d);
  rewrite("[" + good + R"(, {"file_path": "./train/nope", "transform_matrix": )" + kPose + "}]");
  EXPECT_TRUE(has(load_error(d), train + ": frames[1].file_path './train/nope': no such image"))
      << load_error(d);
  rewrite(R"([{"file_path": "./train/r_0", "transform_matrix": [[1, 0, 0, 0], [0, 1, 0, 0]]}])");
  EXPECT_TRUE(has(load_error(d), train + ": frames[0].transform_matrix must be 4 rows of 4 "
                                         "numbers"))
      << load_error(d);
  rewrite(R"([{"file_path": "./train/r_0", "transform_matrix": [[2, 0, 0, 0], [0, 1, 0, 0], )"
          R"([0, 0, 1, 4], [0, 0, 0, 1]]}])");
  EXPECT_TRUE(has(load_error(d), train + ": frames[0].transform_matrix must have an orthonormal "
                                         "rotation"))
      << load_error(d);
  rewrite(R"([{"file_path": "./train/r_0", "transform_matrix": [[1, 0, 0, 0], [0, 1, 0, 0], )"
          R"([0, 0, 1, 4], [0, 0, 1, 1]]}])");
  EXPECT_TRUE(has(load_error(d), "frames[0].transform_matrix must end in the row [0, 0, 0, 1]"))
      << load_error(d);
  write_rgba(d / "train" / "big.png", 5, 3, 0, 0, 0, 255);  // another size than r_0
  rewrite("[" + good + R"(, {"file_path": "train/big.png", "transform_matrix": )" + kPose + "}]");
  EXPECT_TRUE(has(load_error(d), "big.png is 5x3, the scene's other images 4x3")) << load_error(d);
  rewrite("[" + good + "]");
  EXPECT_EQ(load_error(d), "(loaded)");
  fs::remove(d / "transforms_test.json");
  EXPECT_TRUE(has(load_error(d), "no transforms_test.json or transforms_val.json"))
      << load_error(d);
  fs::remove(train);
  EXPECT_TRUE(has(load_error(d), "no transforms_train.json")) << load_error(d);
}

// The procedural scene written as a transforms.json folder reads back as the same rays (the
// folder reader's camera convention is the generator's) and colours within 8-bit rounding.
TEST(RadianceField, SynthesisedFolderReadsBackAsTheProceduralScene) {
  const fs::path d = fs::temp_directory_path() / "nerf_folder_synth";
  fs::remove_all(d);
  SynthOptions o;
  o.format = "transforms", o.n = 3, o.out = d.string();
  synth_nerf(o, 16);
  LoadOptions lo;
  lo.dir = d.string();
  const Splits f = load_dataset(DatasetKind::radianceField, lo);
  ProceduralViews v;
  v.train = 3, v.size = 16;
  const Splits p = load_procedural_field(v, 2, 6, 1, 0);
  ASSERT_EQ(f.train.x.shape(), p.train.x.shape());
  ASSERT_EQ(f.test.x.shape(), p.test.x.shape());
  for (const auto* pair : {&f.train, &f.test}) {
    const Dataset& q = pair == &f.train ? p.train : p.test;
    for (int64_t i = 0; i < q.x.numel(); ++i)
      ASSERT_NEAR(pair->x.data<float>()[i], q.x.data<float>()[i], 1e-6) << i;
    for (int64_t i = 0; i < q.y.numel(); ++i)
      ASSERT_NEAR(pair->y.data<float>()[i], q.y.data<float>()[i], 0.5 / 255 + 1e-6) << i;
  }
}

}  // namespace
}  // namespace netspec::data
