// metrics.csv / metrics.jsonl writers (see metrics_log.h).
#include "report/metrics_log.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_check.h"
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

std::string MetricsLog::csv_path() const { return (fs::path(dir_) / (stem_ + ".csv")).string(); }
std::string MetricsLog::jsonl_path() const {
  return (fs::path(dir_) / (stem_ + ".jsonl")).string();
}

DecimatedRows::DecimatedRows(size_t cap) : cap_(cap) {
  if (cap != 0 && cap < 4) fail("metrics", "a row cap must be 0 or >= 4 (got {})", cap);
}

void DecimatedRows::add(Row row) {
  if (off_grid_) rows_.pop_back();  // the previous latest row was kept only as the latest
  off_grid_ = added_++ % stride_ != 0;
  rows_.push_back(std::move(row));
  if (cap_ == 0 || rows_.size() <= cap_) return;
  // Over the cap: keep grid rows 0, 2s, 4s, ... (every second one) and the latest row.
  const size_t grid = rows_.size() - (off_grid_ ? 1 : 0);
  std::vector<Row> kept;
  kept.reserve(cap_ / 2 + 2);
  for (size_t j = 0; j < grid; j += 2) kept.push_back(std::move(rows_[j]));
  const bool dropped_last = (grid - 1) % 2 == 1;  // the latest grid row is off the new grid
  if (off_grid_ || dropped_last) {
    kept.push_back(std::move(rows_.back()));
    off_grid_ = true;
  }
  rows_ = std::move(kept);
  stride_ *= 2;
}

void for_each_jsonl(const std::string& path, const std::function<void(Row&&)>& f) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return;
  const MappedFile file("metrics", path);  // never blocks on a FIFO; pages, not a copy
  const std::string_view text = file.bytes();
  size_t line_no = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    const bool last = nl == std::string_view::npos;
    const std::string line(text.substr(at, last ? std::string_view::npos : nl - at));
    at = last ? text.size() : nl + 1;
    ++line_no;
    if (line.empty()) continue;
    Row r;
    try {
      r = parse_json_line(line);
    } catch (const Error& e) {
      // Rows are appended whole, newline last: only an unterminated last line can be torn (the
      // writer was killed mid-append). Any other bad line is refused, not skipped with its rows.
      if (last) break;
      fail("metrics",
           "{} line {} is not a metrics row ({}); fix or delete that line (the rows after it "
           "are valid), or start over with --overwrite",
           path, line_no, e.what());
    }
    f(std::move(r));
  }
}

std::vector<Row> read_jsonl(const std::string& path, size_t max_rows) {
  DecimatedRows rows(max_rows);
  for_each_jsonl(path, [&](Row&& r) { rows.add(std::move(r)); });
  return rows.rows();
}

MetricsLog::MetricsLog(std::string dir, int64_t keep_through, std::string stem, std::string key,
                       size_t max_rows)
    : dir_(std::move(dir)), stem_(std::move(stem)), rows_(max_rows) {
  if (dir_.empty()) return;
  if (!fs::exists(jsonl_path()) && !fs::exists(csv_path())) return;
  // Rewrite both files from the kept rows (atomic), so they always agree; streamed in chunks
  // (a long steps.jsonl is never held whole), the jsonl read twice rather than kept.
  auto keep = [&](const Row& r) {
    auto e = get(r, key);
    return e && *e <= static_cast<double>(keep_through);
  };
  auto rewrite = [&](const std::string& path, bool csv) {
    write_file_atomic(path, [&](const ChunkSink& sink) {
      std::string buf;
      bool header = !csv;
      for_each_jsonl(jsonl_path(), [&](Row&& r) {
        if (!keep(r)) return;
        if (!header) {
          for (size_t i = 0; i < r.size(); ++i) buf += (i ? "," : "") + r[i].first;
          buf += "\n";
          header = true;
        }
        buf += (csv ? csv_line(r) : json_line(r)) + "\n";
        if (buf.size() >= (1u << 20)) {
          sink(buf);
          buf.clear();
        }
        if (csv) rows_.add(std::move(r));  // once, on the second reading
      });
      sink(buf);
    });
  };
  // The csv first: it is written from the jsonl as it still is; then the jsonl itself.
  rewrite(csv_path(), true);
  rewrite(jsonl_path(), false);
}

MetricsLog::~MetricsLog() {
  try {
    flush();
  } catch (...) {  // a destructor must not throw; the next flush or resume reports it
  }
}

void MetricsLog::append(const Row& row, bool write) {
  rows_.add(row);
  if (dir_.empty()) return;
  std::error_code ec;
  if (!header_written_ && (!fs::exists(csv_path(), ec) || fs::file_size(csv_path(), ec) == 0)) {
    for (size_t i = 0; i < row.size(); ++i) pending_csv_ += (i ? "," : "") + row[i].first;
    pending_csv_ += '\n';
  }
  header_written_ = true;
  pending_csv_ += csv_line(row) + '\n';
  pending_jsonl_ += json_line(row) + '\n';
  if (write) flush();
}

void MetricsLog::flush() {
  if (dir_.empty() || pending_jsonl_.empty()) return;
  // Never through a symlink planted in the run dir; a failed write (read-only, ENOSPC) stops the
  // run naming the file instead of losing the rows.
  const std::string csv = std::move(pending_csv_), jsonl = std::move(pending_jsonl_);
  pending_csv_.clear();
  pending_jsonl_.clear();
  append_file(csv_path(), csv, "metrics");
  append_file(jsonl_path(), jsonl, "metrics");
}

}  // namespace netspec::report
