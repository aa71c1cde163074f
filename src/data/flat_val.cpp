// Flat validation folders with a labels file (see flat_val.h).
#include "data/flat_val.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.h"
#include "data/dir_list.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLabelFiles[] = {"val_labels.txt", "val_labels.csv", "LOC_val_solution.csv"};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r\"");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r\"") - a + 1);
}

// (image, class word) of a line: split at the first comma, else at the first blank.
std::pair<std::string, std::string> fields(const std::string& line) {
  size_t cut = line.find(',');
  if (cut == std::string::npos) cut = line.find_first_of(" \t");
  if (cut == std::string::npos) return {trim(line), ""};
  const std::string rest = trim(line.substr(cut + 1));
  return {trim(line.substr(0, cut)), rest.substr(0, rest.find_first_of(" \t"))};
}

}  // namespace

std::string find_val_labels(const std::string& dir, const std::string& split_dir) {
  for (const std::string& d : {dir, split_dir})
    for (const char* name : kLabelFiles)
      if (entry_kind("folder", fs::path(d) / name) == EntryKind::kRegular)
        return (fs::path(d) / name).string();
  return "";
}

bool is_flat_image_dir(const std::string& split_dir) {
  bool images = false;
  for (const DirEntry& e : list_dir("folder", split_dir)) {
    if (e.kind == EntryKind::kDirectory) return false;
    images = images || (e.kind == EntryKind::kRegular && has_image_ext(e.path.string()));
  }
  return images;
}

std::vector<std::pair<std::string, int32_t>> list_flat_split(
    const std::string& split_dir, const std::string& labels_file,
    const std::vector<std::string>& classes) {
  if (labels_file.empty())
    fail("folder",
         "{}: images lie flat (no class subfolders) and no labels file was found (expected "
         "val_labels.txt, val_labels.csv or LOC_val_solution.csv beside it or in it: lines "
         "'IMAGE CLASS')",
         split_dir);
  std::map<std::string, int32_t> class_of;
  for (size_t c = 0; c < classes.size(); ++c) class_of[classes[c]] = static_cast<int32_t>(c);
  // Images by file name and by stem (ImageNet's lists often omit ".JPEG").
  std::map<std::string, std::string> path_of;
  for (const DirEntry& e : list_dir("folder", split_dir))
    if (e.kind == EntryKind::kRegular && has_image_ext(e.path.string())) {
      path_of[e.path.filename().string()] = e.path.string();
      path_of[e.path.stem().string()] = e.path.string();
    }
  std::ifstream f(labels_file);
  if (!f) fail("folder", "{}: cannot open", labels_file);
  std::map<std::string, std::pair<int32_t, int>> label;  // image path -> (class, line)
  int lineno = 0;
  for (std::string line; std::getline(f, line);) {
    ++lineno;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    auto [image, cls] = fields(t);
    auto img = path_of.find(fs::path(image).filename().string());
    auto c = class_of.find(cls);
    if (lineno == 1 && img == path_of.end() && c == class_of.end()) continue;  // a header
    if (img == path_of.end()) continue;  // an image not in this folder
    if (cls.empty())
      fail("folder", "{}:{}: no class after '{}' (expected 'IMAGE CLASS')", labels_file, lineno,
           image);
    if (c == class_of.end())
      fail("folder",
           "{}:{}: label '{}' of {} is not a training class (the {} training classes "
           "are the train/ folders: {}, ...)",
           labels_file, lineno, cls, image, classes.size(), classes.front());
    auto [it, fresh] = label.emplace(img->second, std::make_pair(c->second, lineno));
    if (!fresh && it->second.first != c->second)
      fail("folder", "{}:{}: {} labelled '{}' here and '{}' on line {}", labels_file, lineno, image,
           cls, classes[it->second.first], it->second.second);
  }
  std::vector<std::pair<std::string, int32_t>> files;
  for (const DirEntry& e : list_dir("folder", split_dir))
    if (e.kind == EntryKind::kRegular && has_image_ext(e.path.string())) {
      auto it = label.find(e.path.string());
      if (it == label.end())
        fail("folder", "{}: no label for {} in {}", split_dir, e.path.filename().string(),
             labels_file);
      files.emplace_back(e.path.string(), it->second.first);
    }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace netspec::data
