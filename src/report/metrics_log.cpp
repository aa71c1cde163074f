// metrics.csv / metrics.jsonl writers (see metrics_log.h).
#include "report/metrics_log.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/safetensors.h"

namespace netspec::report {
namespace {

namespace fs = std::filesystem;

std::string num(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 1e15)
    return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

}  // namespace

std::string csv_line(const Row& row) {
  std::string s;
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) s += ',';
    if (row[i].second) s += num(*row[i].second);
  }
  return s;
}

std::string json_line(const Row& row) {
  std::string s = "{";
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) s += ", ";
    const auto& v = row[i].second;
    // JSON has no NaN/Inf: a non-finite value is written as null.
    s += fmt::format("\"{}\": {}", row[i].first, v && std::isfinite(*v) ? num(*v) : "null");
  }
  return s + "}";
}

Row parse_json_line(const std::string& line) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    fail("metrics", "bad metrics.jsonl line '{}': {}", line, e.what());
  }
  if (!j.is_object()) fail("metrics", "metrics.jsonl line is not an object (got '{}')", line);
  Row r;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_null())
      r.emplace_back(it.key(), std::nullopt);
    else if (it.value().is_number())
      r.emplace_back(it.key(), it.value().get<double>());
    else
      fail("metrics", "metrics.jsonl value '{}' is not a number", it.key());
  }
  return r;
}

std::optional<double> get(const Row& row, const std::string& key) {
  for (const auto& [k, v] : row)
    if (k == key) return v;
  return std::nullopt;
}

std::string MetricsLog::csv_path() const { return (fs::path(dir_) / "metrics.csv").string(); }
std::string MetricsLog::jsonl_path() const { return (fs::path(dir_) / "metrics.jsonl").string(); }

MetricsLog::MetricsLog(std::string dir, int keep_through) : dir_(std::move(dir)) {
  if (dir_.empty()) return;
  std::ifstream in(jsonl_path());
  std::string line, jsonl;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    Row r;
    try {
      r = parse_json_line(line);
    } catch (const Error&) {
      break;  // a torn last line (killed while appending): drop it and what follows
    }
    auto e = get(r, "epoch");
    if (!e || *e > keep_through) continue;
    rows_.push_back(r);
    jsonl += json_line(r) + "\n";
  }
  // Rewrite both files from the kept rows (atomic), so they always agree.
  std::string csv;
  if (!rows_.empty()) {
    for (size_t i = 0; i < rows_[0].size(); ++i) csv += (i ? "," : "") + rows_[0][i].first;
    csv += "\n";
    for (const Row& r : rows_) csv += csv_line(r) + "\n";
  }
  if (fs::exists(jsonl_path()) || fs::exists(csv_path())) {
    write_file_atomic(jsonl_path(), jsonl);
    write_file_atomic(csv_path(), csv);
  }
}

void MetricsLog::append(const Row& row) {
  rows_.push_back(row);
  if (dir_.empty()) return;
  bool fresh = !fs::exists(csv_path()) || fs::file_size(csv_path()) == 0;
  std::ofstream csv(csv_path(), std::ios::app);
  if (fresh) {
    for (size_t i = 0; i < row.size(); ++i) csv << (i ? "," : "") << row[i].first;
    csv << '\n';
  }
  csv << csv_line(row) << '\n';
  std::ofstream(jsonl_path(), std::ios::app) << json_line(row) << '\n';
}

}  // namespace netspec::report
