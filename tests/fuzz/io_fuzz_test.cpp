// Mutation fuzz tests for the readers of untrusted files: spec files (parse + ParamTable),
// safetensors, PNG/JPEG, IDX, the pickle machine, torch.save (.pth) files, zip archives and the
// COCO and VOC annotation readers. Valid
// seeds get byte flips, insertions, deletions, slice copies, truncations and number changes; every
// mutant must be read or refused with a netspec::Error. Another exception, a crash, a hang or a
// sanitizer report (NETSPEC_SANITIZE) fails. Deterministic; NETSPEC_FUZZ_SECONDS (per target,
// default 5) and NETSPEC_FUZZ_SEED; NETSPEC_FUZZ_TRACE=FILE writes each mutant there before it runs
// (to keep a hang's input).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "core/error.h"
#include "core/pickle.h"
#include "core/safetensors.h"
#include "core/torch_pickle.h"
#include "core/zip_reader.h"
#include "data/det_data.h"
#include "data/idx.h"
#include "data/image.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "tests/core/zip_fixture.h"
#include "tests/data/idx_fixture.h"
#include "tests/data/image_fixture.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/support/test_files.h"

namespace netspec {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

void put(const fs::path& p, const std::string& b) {
  std::ofstream(p, std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
}

using netspec::test_util::slurp;

fs::path scratch(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("netspec_fuzz_" + std::to_string(getpid()));
  fs::create_directories(d);
  return d / name;
}

TEST(FuzzIo, SpecFiles) {
  std::vector<std::string> seeds;
  for (const char* m : {"mlp", "mnist-cnn", "linear", "cifar-bn", "resnet18-cifar"})
    seeds.push_back(slurp(fs::path(NETSPEC_SOURCE_DIR) / "models" / (std::string(m) + ".json")));
  fuzz::run(seeds, [](const std::string& text) {
    SpecFile s = parse_spec(text, "fuzz.json");
    build_param_table(s.net);
  });
}

TEST(FuzzIo, SafeTensors) {
  SafeTensors st;
  st.tensors.emplace_back("w", Tensor::from<float>(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  st.tensors.emplace_back("b", Tensor::from<int>(DType::kI32, {1}, {-7}));
  st.tensors.emplace_back("s", Tensor::scalar_f32(0.25f));
  st.metadata["epoch"] = "3";
  fuzz::run({encode_safetensors(st)}, [](const std::string& b) { decode_safetensors(b, "fuzz"); });
  // Through the file reader (mapped) too, fewer rounds.
  const fs::path p = scratch("f.safetensors");
  fuzz::run({encode_safetensors(st)}, [&](const std::string& b) {
    put(p, b);
    read_safetensors(p.string());
  });
}

TEST(FuzzIo, ImageDecoders) {
  setenv("NETSPEC_MAX_IMAGE_PIXELS", "1000000", 1);  // mutated headers stay cheap
  std::vector<uint8_t> px(6 * 5 * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 37);
  const fs::path png = scratch("seed.png");
  test::write_png(png.string(), 6, 5, PNG_FORMAT_RGB, px);
  const std::vector<std::string> seeds = {slurp(png), test::jpeg_bytes(6, 5, 3, px),
                                          test::jpeg_bytes(6, 5, 1, std::vector<uint8_t>(30, 9))};
  const fs::path p = scratch("m.img");
  fuzz::run(seeds, [&](const std::string& b) {
    put(p, b);
    data::decode_image(p.string());
  });
  unsetenv("NETSPEC_MAX_IMAGE_PIXELS");
}

TEST(FuzzIo, IdxReader) {
  std::vector<uint8_t> img(3 * 4 * 4), lab = {1, 2, 9};
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<uint8_t>(i * 13);
  const std::string images = test::idx_bytes({3, 4, 4}, img), labels = test::idx_bytes({3}, lab);
  const fs::path p = scratch("m.idx"), gz = scratch("m.idx.gz");
  fuzz::run({images, labels}, [&](const std::string& b) {
    put(p, b);
    try {
      data::read_idx_images(p.string());
    } catch (const Error&) {
      data::read_idx_labels(p.string());
    }
  });
  // gzip-compressed files: mutate the compressed bytes.
  test::write_gz(gz.string(), images);
  fuzz::run({slurp(gz)}, [&](const std::string& b) {
    put(gz, b);
    data::read_idx_images(gz.string());
  });
}

// A torch.save data.pkl: {'w': f32 (2, 3) view, 'b': parameter of a (2,) slice (offset 4),
// 'e': 3 (int), 'n': OrderedDict([('x', 1.5)])}; storages '0' (6 floats) and '1' (6 floats).
std::string torch_pickle_seed() {
  auto U = [](const std::string& t) { return "X" + test::le(t.size(), 4) + t; };
  auto storage = [&](const std::string& key) {
    return "(" + U("storage") + "ctorch\nFloatStorage\n" + U(key) + U("cpu") + "K\x06tQ";
  };
  const std::string tensor = "ctorch._utils\n_rebuild_tensor_v2\n";
  return "\x80\x02"s + "ccollections\nOrderedDict\n)Rq\x00("s + U("w") + tensor + "(" +
         storage("0") + "K\x00K\x02K\x03\x86K\x03K\x01\x86\x89)tR"s + U("b") +
         "ctorch._utils\n_rebuild_parameter\n(" + tensor + "(" + storage("1") +
         "K\x04K\x02\x85K\x01\x85\x89)tR\x88)tR" + U("e") + "K\x03" + U("n") +
         "ccollections\nOrderedDict\n(](" + U("x") + "G\x3f\xf8\x00\x00\x00\x00\x00\x00tatRu."s;
}

std::string floats(int n) {
  std::string d;
  for (int i = 0; i < n; ++i) {
    const float v = 0.5f * static_cast<float>(i);
    d.append(reinterpret_cast<const char*>(&v), 4);
  }
  return d;
}

// The pickle machine alone (persistent ids become opaque values).
TEST(FuzzIo, Pickle) {
  PickleHooks hooks;
  hooks.persistent_load = [](const PyRef& pid) {
    PyRef v = PyValue::make(PyValue::Kind::opaque);
    v->s = pid->kind_name();
    return v;
  };
  const std::string nested = "\x80\x02" + std::string(50, ']') + std::string(49, 'a') + ".";
  fuzz::run({torch_pickle_seed(), nested},
            [&](const std::string& b) { unpickle(b, "fuzz", hooks); });
}

// Mutated data.pkl inside a well-formed archive (so the CRC holds): the pickle machine, the
// storage and view checks and the state-dict walk of the .pth reader.
TEST(FuzzIo, TorchPickleInArchive) {
  const fs::path p = scratch("f.pth");
  const std::string s0 = floats(6), s1 = floats(6);
  fuzz::run({torch_pickle_seed()}, [&](const std::string& pkl) {
    put(p, test::make_zip({{"a/data.pkl", pkl}, {"a/data/0", s0}, {"a/data/1", s1}}));
    read_weight_file(p.string());
  });
}

// Mutated archives: the zip reader (end records, zip64, extra fields, local headers, inflate,
// CRC) and then the .pth reader on whatever survives.
TEST(FuzzIo, ZipArchives) {
  const fs::path p = scratch("z.pth");
  const std::vector<test::ZipFile> files = {{"a/data.pkl", torch_pickle_seed(), true},
                                            {"a/data/0", floats(6)},
                                            {"a/data/1", floats(6), true},
                                            {"a/byteorder", "little"}};
  fuzz::run({test::make_zip(files), test::make_zip(files, true)}, [&](const std::string& b) {
    put(p, b);
    ZipReader z(p.string());
    for (const ZipEntry& e : z.entries()) z.read(e);
    read_weight_file(p.string());
  });
}

// COCO instances files: the JSON reader with its duplicate-key callback and the field checks.
TEST(FuzzIo, CocoAnnotations) {
  const fs::path p = scratch("instances_train.json");
  const std::string seed =
      R"({"images": [{"id": 1, "file_name": "a.png", "width": 8, "height": 6},)"
      R"( {"id": 2, "file_name": "b.png"}], "categories": [{"id": 3, "name": "cat"},)"
      R"( {"id": 1, "name": "dog"}], "annotations": [{"image_id": 1, "category_id": 3,)"
      R"( "bbox": [1, 2, 3, 4]}, {"image_id": 2, "category_id": 1, "bbox": [0.5, 0, 2, 2],)"
      R"( "iscrowd": 0}, {"image_id": 2, "category_id": 1, "bbox": [1, 1, 1, 1], "iscrowd": 1}]})";
  fuzz::run({seed}, [&](const std::string& b) {
    put(p, b);
    data::read_coco(p.string(), p.parent_path().string());
  });
}

// VOC annotation XML through libxml2: comments, attributes, CDATA, a DTD with entities (never
// expanded) and the number fields.
TEST(FuzzIo, VocAnnotations) {
  const fs::path p = scratch("a.xml");
  const std::string seed = R"(<annotation><filename>a.png</filename><size><width>40</width>
<height>20</height></size><!-- a comment --><object id="1"><name>cat</name><bndbox>
<xmin>2</xmin><ymin>3</ymin><xmax>12</xmax><ymax>13</ymax></bndbox></object>
<object><name>dog</name><bndbox><xmin>20</xmin><ymin>1</ymin><xmax>30</xmax><ymax>9</ymax>
</bndbox></object></annotation>)";
  const std::string with_dtd = R"(<?xml version="1.0"?>
<!DOCTYPE annotation [<!ENTITY a "x&b;"><!ENTITY b "yy"><!ENTITY c SYSTEM "file:///etc/hostname">]>
<v:annotation xmlns:v="urn:v"><v:filename><![CDATA[a.png]]></v:filename><note>&a;&c;</note>
<object><name>d&amp;g</name><bndbox><xmin>1&#48;</xmin><ymin>1</ymin><xmax>30</xmax><ymax>9</ymax>
</bndbox></object>
</v:annotation>)";
  fuzz::run({seed, with_dtd}, [&](const std::string& b) {
    put(p, b);
    std::vector<std::string> classes;
    data::read_voc_xml(p.string(), p.parent_path().string(), classes);
  });
}

}  // namespace
}  // namespace netspec
