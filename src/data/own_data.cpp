// Image-folder and CSV datasets (see own_data.h).
#include "data/own_data.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/file_check.h"
#include "data/dir_list.h"
#include "data/flat_val.h"
#include "data/image.h"
#include "data/pack.h"
#include "data/sample_source.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

// [N, 3, H, W] ui8 -> [N, 1, H, W] ui8, the rounded channel mean.
Dataset to_gray(const Dataset& ds) {
  const Shape& s = ds.x.shape();
  const int64_t n = s.at(0), hw = s.at(2) * s.at(3);
  Dataset g{Tensor(DType::kUI8, {n, 1, s[2], s[3]}), ds.y, kGrayImageNetNorm.mean,
            kGrayImageNetNorm.std};
  for (int64_t i = 0; i < n; ++i)
    rgb_to_gray(ds.x.data<uint8_t>() + i * 3 * hw, hw, g.x.data<uint8_t>() + i * hw);
  return g;
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : line) {
    if (ch == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (ch != '\r') {
      cur += ch;
    }
  }
  out.push_back(cur);
  for (auto& c : out) {  // trim spaces and surrounding quotes
    while (!c.empty() && c.front() == ' ') c.erase(c.begin());
    while (!c.empty() && c.back() == ' ') c.pop_back();
    if (c.size() >= 2 && c.front() == '"' && c.back() == '"') c = c.substr(1, c.size() - 2);
  }
  return out;
}

bool parse_double(const std::string& s, double& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

FolderSplitFiles list_folder_splits(const std::string& dir, int64_t limit) {
  if (dir.empty())
    fail("folder",
         "no data directory: pass --data DIR with DIR/<class>/*.jpg (or DIR/train/ "
         "and DIR/val/)");
  const fs::path d = dir;
  const bool split = entry_kind("folder", d / "train") == EntryKind::kDirectory;
  ImageFolderList tr = list_image_folder(split ? (d / "train").string() : dir, limit);
  FolderSplitFiles f;
  for (const char* v : {"val", "test"})
    if (split && entry_kind("folder", d / v) == EntryKind::kDirectory) {
      const std::string vd = (d / v).string();
      f.test = is_flat_image_dir(vd)  // ImageNet's val/: flat images + a labels file
                   ? list_flat_split(vd, find_val_labels(dir, vd), tr.classes)
                   : list_image_folder(vd, 0, tr.classes).files;
      f.has_test = true;
      break;
    }
  f.train = std::move(tr.files);
  f.classes = std::move(tr.classes);
  return f;
}

Dataset whole_image_split(std::shared_ptr<const SampleSource> src, std::vector<int32_t> labels,
                          int64_t channels, int64_t height, int64_t width, std::string& line) {
  const int64_t n = src->size();
  const PipelineChoice how = choose_pipeline(estimate_whole_bytes(*src), n);
  line = how.line + " (training split: whole images for randomResizedCrop)";
  const Normalization& norm = channels == 1 ? kGrayImageNetNorm : kImageNetNorm;
  if (!how.stream) src = decoded_source(*src, n, channels, height, width, 1.0);
  return streamed_dataset(std::move(src), std::move(labels), channels, height, width, norm);
}

Splits load_image_folder_dataset(const std::string& dir, int64_t channels, int64_t height,
                                 int64_t width, int64_t limit, double crop_ratio,
                                 bool whole_train) {
  if (dir.empty()) list_folder_splits(dir, limit);  // the message for no directory
  if (channels != 1 && channels != 3)
    fail("folder", "{}: images need a net with 1 or 3 input channels (got {})", dir, channels);
  if (height < 1 || width < 1)
    fail("image-folder", "{}: the input size is needed (got {}x{})", dir, height, width);
  if (is_packed_dir(dir))  // `netspec data pack` output (pack.h)
    return load_packed_dataset(dir, channels, height, width, limit, crop_ratio, whole_train);
  FolderSplitFiles listed = list_folder_splits(dir, limit);
  auto& tr = listed.train;
  auto& test = listed.test;
  const bool has_test = listed.has_test;
  // In RAM when the decoded splits fit the memory budget, else streamed (sample_source.h).
  Splits s;
  const int64_t samples = static_cast<int64_t>(tr.size() + test.size());
  const PipelineChoice how = choose_pipeline(samples * channels * height * width, samples);
  s.pipeline = how.line;
  const Normalization& norm = channels == 1 ? kGrayImageNetNorm : kImageNetNorm;
  auto read = [&](std::vector<std::pair<std::string, int32_t>>& files, double ratio) {
    if (!how.stream) {
      Dataset ds = load_image_list(files, height, width, kImageNetNorm, ratio);
      return channels == 1 ? to_gray(ds) : ds;
    }
    std::vector<int32_t> labels;
    for (const auto& f : files) labels.push_back(f.second);
    return streamed_dataset(file_list_source(std::move(files), channels, height, width, ratio,
                                             pipeline_options().dct_scale),
                            std::move(labels), channels, height, width, norm);
  };
  if (pipeline_options().train_unread) {  // listed only: full-resolution reads if ever read
    std::vector<int32_t> labels;
    for (const auto& f : tr) labels.push_back(f.second);
    s.train = streamed_dataset(file_list_source(std::move(tr), channels, height, width, 1.0),
                               std::move(labels), channels, height, width, norm);
    if (!s.pipeline.empty()) s.pipeline += " (training split listed, not decoded)";
  } else if (whole_train && pipeline_options().stream_allowed) {
    std::vector<int32_t> labels;
    for (const auto& f : tr) labels.push_back(f.second);
    s.train = whole_image_split(
        file_list_source(std::move(tr), channels, height, width, 1.0, pipeline_options().dct_scale),
        std::move(labels), channels, height, width, s.pipeline);
  } else {
    s.train = read(tr, 1.0);
  }
  if (has_test) s.test = read(test, crop_ratio);
  s.class_names = std::move(listed.classes);
  return s;
}

Splits load_csv_dataset(const std::string& path, int64_t limit) {
  if (path.empty()) fail("csv", "no data file: pass --data FILE.csv");
  if (!fs::is_regular_file(path)) fail("csv", "{}: not a regular file", path);
  std::ifstream f(path);
  if (!f) fail("csv", "{}: cannot open", path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(f, line);)
    if (line.find_first_not_of(" \r") != std::string::npos) rows.push_back(split_csv_line(line));
  if (rows.empty()) fail("csv", "{}: no rows", path);
  // A header when some cell of the first row is not a number.
  bool header = false;
  double tmp;
  for (const auto& c : rows[0]) header = header || !parse_double(c, tmp);
  size_t label_col = rows[0].size() - 1;
  if (header)
    for (size_t i = 0; i < rows[0].size(); ++i)
      if (rows[0][i] == "label") label_col = i;
  const size_t first = header ? 1 : 0, cols = rows[0].size();
  if (cols < 2) fail("csv", "{}: needs at least one feature column and a label column", path);
  int64_t n = static_cast<int64_t>(rows.size() - first);
  if (limit > 0) n = std::min(n, limit);
  if (n < 1) fail("csv", "{}: no data rows", path);
  // Labels: all integers >= 0 are class indices; otherwise names, sorted.
  bool numeric = true;
  std::map<std::string, int32_t> names;
  for (int64_t r = 0; r < n; ++r) {
    const auto& row = rows[first + r];
    if (row.size() != cols)
      fail("csv", "{}:{}: {} cells (expected {} as in the first row)", path, first + r + 1,
           row.size(), cols);
    double v;
    numeric = numeric && parse_double(row[label_col], v) && v >= 0 && v == std::floor(v) &&
              v < 2147483647.0;
    names[row[label_col]] = 0;
  }
  Splits s;
  if (!numeric) {
    int32_t k = 0;
    for (auto& [name, id] : names) {
      id = k++;
      s.class_names.push_back(name);
    }
  }
  const int64_t d = static_cast<int64_t>(cols - 1);
  Dataset ds{Tensor(DType::kF32, {n, d}), Tensor(DType::kI32, {n})};
  for (int64_t r = 0; r < n; ++r) {
    const auto& row = rows[first + r];
    int64_t j = 0;
    for (size_t c = 0; c < cols; ++c) {
      if (c == label_col) continue;
      double v;
      if (!parse_double(row[c], v) || !std::isfinite(v))
        fail("csv", "{}:{}: column {} is not a finite number (got '{}')", path, first + r + 1,
             c + 1, row[c]);
      ds.x.data<float>()[r * d + j++] = static_cast<float>(v);
    }
    ds.y.data<int32_t>()[r] =
        numeric ? static_cast<int32_t>(std::stod(row[label_col])) : names.at(row[label_col]);
  }
  s.train = std::move(ds);
  s.test = Dataset{Tensor(DType::kF32, {0, d}), Tensor(DType::kI32, {0})};
  return s;
}

Tensor load_csv_features(const std::string& path, int64_t features) {
  const std::string text = read_regular_file("csv", path);
  std::istringstream in(text);
  std::vector<float> values;
  size_t label_col = std::string::npos;  // the dropped column, once the width is known
  int64_t n = 0, line_no = 0;
  bool seen_header = false;
  double v;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \r") == std::string::npos) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    const auto width = static_cast<int64_t>(cells.size());
    if (width != features && width != features + 1)
      fail("csv", "{}:{}: {} cells (the net takes {} features, optionally with a label column)",
           path, line_no, width, features);
    bool numeric = true;
    for (const auto& c : cells) numeric = numeric && parse_double(c, v);
    const bool first = n == 0 && !seen_header;
    if (first && !numeric) {  // a header (as training reads it): it may name the label column
      seen_header = true;
      for (size_t i = 0; i < cells.size(); ++i)
        if (cells[i] == "label") label_col = i;
      if (width == features + 1 && label_col == std::string::npos) label_col = cells.size() - 1;
      continue;
    }
    if (width == features + 1 && label_col == std::string::npos) label_col = cells.size() - 1;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (width == features + 1 && c == label_col) continue;
      if (!parse_double(cells[c], v) || !std::isfinite(v))
        fail("csv", "{}:{}: column {} is not a finite number (got '{}')", path, line_no, c + 1,
             cells[c]);
      values.push_back(static_cast<float>(v));
    }
    ++n;
  }
  if (n == 0) fail("csv", "{}: no data rows", path);
  Tensor x(DType::kF32, {n, features});
  std::copy(values.begin(), values.end(), x.data<float>());
  return x;
}

}  // namespace netspec::data
