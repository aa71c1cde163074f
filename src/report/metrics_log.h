// Metrics in the run directory: per epoch metrics.csv (header + one row per epoch) and
// metrics.jsonl (one JSON object per epoch); per step steps.csv / steps.jsonl (same format, keyed
// by "step", buffered and written by flush()). A row is an ordered list of named numbers; a missing
// value (no evaluation that epoch) is an empty CSV cell and a JSON null. Opening keeps only rows
// with `key` (epoch / step) <= keep_through, so a run resumed from a checkpoint never duplicates
// rows or keeps rows written after that checkpoint.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace netspec::report {

using Row = std::vector<std::pair<std::string, std::optional<double>>>;  // first key: "epoch"

class MetricsLog {
 public:
  // dir empty: rows are kept in memory only. Files: <stem>.csv and <stem>.jsonl.
  MetricsLog(std::string dir, int64_t keep_through, std::string stem = "metrics",
             std::string key = "epoch");
  ~MetricsLog();
  // Appends a row; written to the files now when `write`, else at the next flush().
  void append(const Row& row, bool write = true);
  // Appends the pending rows (O_NOFOLLOW: never through a planted symlink). A failed write is an
  // Error naming the file (rows are never lost silently).
  void flush();
  const std::vector<Row>& rows() const { return rows_; }
  std::string csv_path() const;
  std::string jsonl_path() const;

 private:
  std::string dir_, stem_;
  std::vector<Row> rows_;
  std::string pending_csv_, pending_jsonl_;
  bool header_written_ = false;
};

// One CSV line (no newline): integral values without a decimal point, others shortest round-trip.
std::string csv_line(const Row& row);
std::string json_line(const Row& row);
// Parses a metrics.jsonl line back (keys in file order). Throws netspec::Error on bad JSON.
Row parse_json_line(const std::string& line);
// Every row of a metrics.jsonl / steps.jsonl file (none when it does not exist; an unterminated
// last line, torn by a killed append, is dropped). Any other unparsable line is an Error naming
// the file and line: later valid rows are never dropped silently. Not a regular file: an Error.
std::vector<Row> read_jsonl(const std::string& path);
// The value called `key` in `row`, or nullopt.
std::optional<double> get(const Row& row, const std::string& key);

}  // namespace netspec::report
