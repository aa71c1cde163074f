// VOC / Pets / COCO detection readers and image loading (det_data.h).
#include "data/det_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include "core/error.h"
#include "core/file_check.h"
#include "core/thread_pool.h"
#include "data/dir_list.h"
#include "data/image.h"
#include "data/voc_xml.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

// Regular files only: a FIFO among the annotations must not block the reader.
std::string slurp(const std::string& path, const char* where) {
  return read_regular_file(where, path);
}

// Renumbers Box::cls so the class list is sorted.
void sort_classes(DetSet& set) {
  std::vector<std::string> sorted = set.classes;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> to(set.classes.size());
  for (size_t i = 0; i < set.classes.size(); ++i)
    to[i] = int(std::find(sorted.begin(), sorted.end(), set.classes[i]) - sorted.begin());
  for (auto& r : set.records)
    for (auto& b : r.boxes) b.cls = to[b.cls];
  set.classes = sorted;
}

}  // namespace

DetRecord read_voc_xml(const std::string& xml_path, const std::string& image_dir,
                       std::vector<std::string>& classes) {
  return parse_voc_annotation(xml_path, image_dir, classes, false);
}

DetSet read_voc(const std::string& dir, const std::string& split,
                std::vector<std::string> classes) {
  const fs::path ann = fs::path(dir) / "Annotations";
  if (entry_kind("voc", ann) != EntryKind::kDirectory)
    fail("voc", "{}: no Annotations/ folder", dir);
  std::vector<std::string> xmls;
  if (!split.empty()) {
    const fs::path list = fs::path(dir) / "ImageSets" / "Main" / (split + ".txt");
    std::istringstream in(slurp(list.string(), "voc"));
    for (std::string id; in >> id;) xmls.push_back((ann / (id + ".xml")).string());
  } else {
    for (const auto& e : fs::directory_iterator(ann))
      if (e.path().extension() == ".xml") xmls.push_back(e.path().string());
    std::sort(xmls.begin(), xmls.end());
  }
  if (xmls.empty()) fail("voc", "{}: no annotations (split '{}')", dir, split);
  DetSet set;
  const bool fixed = !classes.empty();
  set.classes = std::move(classes);
  const std::string images = (fs::path(dir) / "JPEGImages").string();
  for (const auto& x : xmls)
    set.records.push_back(parse_voc_annotation(x, images, set.classes, fixed));
  if (!fixed) sort_classes(set);
  return set;
}

DetSet read_pets_det(const std::string& dir) {
  const fs::path ann = fs::path(dir) / "annotations" / "xmls";
  if (entry_kind("petsDet", ann) != EntryKind::kDirectory)
    fail("petsDet", "{}: no annotations/xmls/ folder", dir);
  std::vector<std::string> xmls;
  for (const auto& e : fs::directory_iterator(ann))
    if (e.path().extension() == ".xml") xmls.push_back(e.path().string());
  std::sort(xmls.begin(), xmls.end());
  DetSet set;
  set.classes = {"cat", "dog"};
  const std::string images = (fs::path(dir) / "images").string();
  for (const auto& x : xmls)
    set.records.push_back(parse_voc_annotation(x, images, set.classes, true));
  if (set.records.empty()) fail("petsDet", "{}: no annotations", dir);
  return set;
}

namespace {

using Json = nlohmann::json;

// COCO field access: a missing field or a value of the wrong type names the file, the record
// and the field (`annotations[3].bbox[1] is a string "x" (expected a number)`), never a raw
// nlohmann type_error.
struct CocoFields {
  const std::string& path;

  [[noreturn]] void bad(const std::string& at, const Json& v, const char* expected) const {
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 40) + "...";
    const std::string type = v.type_name();
    const std::string got =
        v.is_null()
            ? "null"
            : fmt::format("{} {} {}", type[0] == 'o' || type[0] == 'a' ? "an" : "a", type, text);
    fail("coco", "{}: {} is {} (expected {})", path, at, got, expected);
  }
  const Json& field(const Json& rec, const std::string& at, const char* key) const {
    if (!rec.is_object()) bad(at, rec, "an object");
    auto it = rec.find(key);
    if (it == rec.end()) fail("coco", "{}: {} has no '{}'", path, at, key);
    return *it;
  }
  int64_t integer(const Json& v, const std::string& at) const {
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX})
      bad(at, v, "an integer that fits 64 bits");
    if (!v.is_number_integer()) bad(at, v, "an integer");
    return v.get<int64_t>();
  }
  int64_t integer(const Json& rec, const std::string& at, const char* key) const {
    return integer(field(rec, at, key), at + "." + key);
  }
  // An optional integer field (COCO's width, height); `dflt` when absent.
  int64_t integer_or(const Json& rec, const std::string& at, const char* key, int64_t dflt) const {
    if (!rec.is_object()) bad(at, rec, "an object");
    return rec.contains(key) ? integer(rec, at, key) : dflt;
  }
  std::string string(const Json& rec, const std::string& at, const char* key) const {
    const Json& v = field(rec, at, key);
    if (!v.is_string()) bad(at + "." + key, v, "a string");
    return v.get<std::string>();
  }
};

}  // namespace

DetSet read_coco(const std::string& json_path, const std::string& image_dir) {
  Json j;
  try {
    // Duplicate keys are refused (nlohmann keeps the last silently): one key set per open object.
    std::vector<std::unordered_set<std::string>> open;
    j = Json::parse(slurp(json_path, "coco"), [&](int, Json::parse_event_t ev, Json& v) {
      if (ev == Json::parse_event_t::object_start) open.emplace_back();
      if (ev == Json::parse_event_t::object_end) open.pop_back();
      if (ev == Json::parse_event_t::key && !open.back().insert(v.get<std::string>()).second)
        fail("coco", "{}: duplicate key '{}' in an object (at nesting depth {})", json_path,
             v.get<std::string>(), open.size());
      return true;
    });
  } catch (const Json::exception& e) {
    fail("coco", "{}: {}", json_path, e.what());
  }
  if (!j.is_object()) fail("coco", "{}: not a JSON object (got {})", json_path, j.type_name());
  for (const char* k : {"images", "annotations", "categories"})
    if (!j.contains(k) || !j[k].is_array()) fail("coco", "{}: no '{}' array", json_path, k);
  const CocoFields F{json_path};
  DetSet set;
  std::vector<std::pair<int64_t, std::string>> cats;
  for (size_t i = 0; i < j["categories"].size(); ++i) {
    const Json& c = j["categories"][i];
    const std::string at = fmt::format("categories[{}]", i);
    cats.emplace_back(F.integer(c, at, "id"), F.string(c, at, "name"));
  }
  std::sort(cats.begin(), cats.end());
  std::map<int64_t, int> cat_index;
  for (const auto& [id, name] : cats) {
    cat_index[id] = static_cast<int>(set.classes.size());
    set.classes.push_back(name);
  }
  std::map<int64_t, size_t> image_index;
  for (size_t i = 0; i < j["images"].size(); ++i) {
    const Json& im = j["images"][i];
    const std::string at = fmt::format("images[{}]", i);
    DetRecord r;
    r.image = (fs::path(image_dir) / F.string(im, at, "file_name")).string();
    r.width = F.integer_or(im, at, "width", 0);
    r.height = F.integer_or(im, at, "height", 0);
    image_index[F.integer(im, at, "id")] = set.records.size();
    set.records.push_back(std::move(r));
  }
  for (size_t i = 0; i < j["annotations"].size(); ++i) {
    const Json& a = j["annotations"][i];
    const std::string at = fmt::format("annotations[{}]", i);
    if (F.integer_or(a, at, "iscrowd", 0) != 0) continue;
    const int64_t img = F.integer(a, at, "image_id"), cat = F.integer(a, at, "category_id");
    if (!image_index.count(img)) fail("coco", "{}: annotation of unknown image {}", json_path, img);
    if (!cat_index.count(cat))
      fail("coco", "{}: annotation of unknown category {}", json_path, cat);
    const Json& bb = F.field(a, at, "bbox");
    if (!bb.is_array() || bb.size() != 4) F.bad(at + ".bbox", bb, "[x, y, w, h]");
    double v[4];
    for (size_t k = 0; k < 4; ++k) {
      if (!bb[k].is_number()) F.bad(fmt::format("{}.bbox[{}]", at, k), bb[k], "a number");
      v[k] = bb[k].get<double>();
    }
    const double x = v[0], y = v[1], w = v[2], h = v[3];
    if (!(w > 0 && h > 0)) continue;  // degenerate boxes carry no extent to learn
    set.records[image_index[img]].boxes.push_back({x, y, x + w, y + h, cat_index[cat]});
  }
  return set;
}

Tensor resize_bilinear(const Tensor& img, int64_t height, int64_t width) {
  const int64_t c = img.shape()[0], h = img.shape()[1], w = img.shape()[2];
  Tensor out(DType::kUI8, {c, height, width});
  const uint8_t* s = img.data<uint8_t>();
  uint8_t* d = out.data<uint8_t>();
  const double fy = double(h) / double(height), fx = double(w) / double(width);
  for (int64_t y = 0; y < height; ++y) {
    const double sy = std::clamp((double(y) + 0.5) * fy - 0.5, 0.0, double(h - 1));
    const int64_t y0 = int64_t(sy), y1 = std::min(y0 + 1, h - 1);
    const double wy = sy - double(y0);
    for (int64_t x = 0; x < width; ++x) {
      const double sx = std::clamp((double(x) + 0.5) * fx - 0.5, 0.0, double(w - 1));
      const int64_t x0 = int64_t(sx), x1 = std::min(x0 + 1, w - 1);
      const double wx = sx - double(x0);
      for (int64_t k = 0; k < c; ++k) {
        const uint8_t* p = s + k * h * w;
        const double v = (1 - wy) * ((1 - wx) * p[y0 * w + x0] + wx * p[y0 * w + x1]) +
                         wy * ((1 - wx) * p[y1 * w + x0] + wx * p[y1 * w + x1]);
        d[(k * height + y) * width + x] = uint8_t(std::lround(v));
      }
    }
  }
  return out;
}

namespace {

// A box clipped to its w x h image, as annotation tools overshoot the border by a pixel or two;
// one with a non-finite coordinate or nothing inside the image is a labelling error, refused
// naming the image and the box (it was trained on silently, or ended as a diverged loss).
Box clip_box(const Box& b, double w, double h, const std::string& image, size_t k) {
  if (!std::isfinite(b.x0) || !std::isfinite(b.y0) || !std::isfinite(b.x1) || !std::isfinite(b.y1))
    fail("detection", "{}: box {} has a non-finite coordinate ([{}, {}, {}, {}])", image, k, b.x0,
         b.y0, b.x1, b.y1);
  const Box c{std::clamp(b.x0, 0.0, w), std::clamp(b.y0, 0.0, h), std::clamp(b.x1, 0.0, w),
              std::clamp(b.y1, 0.0, h), b.cls};
  if (!(c.x1 > c.x0 && c.y1 > c.y0))
    fail("detection", "{}: box {} ([{}, {}, {}, {}]) lies outside the {}x{} image", image, k, b.x0,
         b.y0, b.x1, b.y1, w, h);
  return c;
}

Box scaled(const Box& b, double sx, double sy) {
  return {b.x0 * sx, b.y0 * sy, b.x1 * sx, b.y1 * sy, b.cls};
}

}  // namespace

DetImages load_det_images(const DetSet& set, int64_t height, int64_t width, int64_t limit,
                          bool mosaic) {
  const int64_t n = limit > 0 ? std::min<int64_t>(limit, int64_t(set.records.size()))
                              : int64_t(set.records.size());
  if (n == 0) fail("detection", "no images to load");
  if (mosaic && (height % 2 || width % 2))
    fail("detection", "mosaic needs an even input size (got {}x{})", height, width);
  DetImages out;
  out.classes = set.classes;
  out.x = Tensor(DType::kUI8, {n, 3, height, width});
  out.boxes.resize(n);
  const int64_t th = mosaic ? height / 2 : height, tw = mosaic ? width / 2 : width;
  // Decoded tiles (each record once), then placed.
  std::vector<Tensor> tiles(n);
  std::vector<std::vector<Box>> tboxes(n);
  auto load_tile = [&](int64_t i) {
    const DetRecord& r = set.records[i];
    Tensor img = decode_image(r.image);
    const double w0 = double(img.shape()[2]), h0 = double(img.shape()[1]);
    const double sx = double(tw) / w0, sy = double(th) / h0;
    tiles[i] = resize_bilinear(img, th, tw);
    for (size_t k = 0; k < r.boxes.size(); ++k)
      tboxes[i].push_back(scaled(clip_box(r.boxes[k], w0, h0, r.image, k), sx, sy));
  };
  parallel_for(n, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) load_tile(i);
  });
  uint8_t* dst = out.x.data<uint8_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t parts = mosaic ? 4 : 1;
    for (int64_t q = 0; q < parts; ++q) {
      const int64_t src = (i + q) % n, oy = (q / 2) * th, ox = (q % 2) * tw;
      const uint8_t* s = tiles[src].data<uint8_t>();
      for (int64_t k = 0; k < 3; ++k)
        for (int64_t y = 0; y < th; ++y)
          std::copy_n(s + (k * th + y) * tw, tw,
                      dst + ((i * 3 + k) * height + oy + y) * width + ox);
      for (Box b : tboxes[src]) {
        b.x0 += double(ox), b.x1 += double(ox), b.y0 += double(oy), b.y1 += double(oy);
        out.boxes[i].push_back(b);
      }
    }
  }
  return out;
}

Splits load_det_splits(DatasetKind kind, const LoadOptions& o) {
  const std::string_view where = enum_name(kind);
  if (o.dir.empty()) fail(where, "no data directory: pass --data DIR");
  if (o.height < 1 || o.width < 1)
    fail(where, "needs the net's image input size (got {}x{})", o.height, o.width);
  DetSet tr, te;
  if (kind == DatasetKind::voc) {
    tr = read_voc(o.dir, "train");
    te = read_voc(o.dir, "val", tr.classes);
  } else if (kind == DatasetKind::coco) {
    const fs::path d(o.dir);
    tr = read_coco((d / "annotations" / "instances_train.json").string(), (d / "images").string());
    te = read_coco((d / "annotations" / "instances_val.json").string(), (d / "images").string());
    if (te.classes != tr.classes) fail(where, "train and val categories differ in {}", o.dir);
  } else {
    DetSet all = read_pets_det(o.dir);
    const size_t n_test = all.records.size() / 5;
    te.classes = tr.classes = all.classes;
    tr.records.assign(all.records.begin(), all.records.end() - int64_t(n_test));
    te.records.assign(all.records.end() - int64_t(n_test), all.records.end());
  }
  const bool mosaic = kind == DatasetKind::petsDet;
  auto det = std::make_shared<DetData>();
  det->train = load_det_images(tr, o.height, o.width, o.limit, mosaic);
  det->test = load_det_images(te, o.height, o.width, 0, mosaic);
  Splits s;
  auto placeholder = [&](const DetImages& im) {
    return Dataset(im.x, Tensor(DType::kI32, {im.x.shape()[0]}), kImageNetNorm.mean,
                   kImageNetNorm.std);
  };
  s.train = placeholder(det->train);
  s.test = placeholder(det->test);
  s.class_names = tr.classes;
  s.det = std::move(det);
  return s;
}

}  // namespace netspec::data
