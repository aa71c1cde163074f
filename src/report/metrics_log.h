// Per-epoch metrics in the run directory, as metrics.csv (header + one row per epoch) and
// metrics.jsonl (one JSON object per epoch). A row is an ordered list of named numbers; a missing
// value (no evaluation that epoch) is an empty CSV cell and a JSON null. Opening keeps only rows
// with epoch <= keep_through, so a run resumed from a checkpoint never duplicates rows or keeps
// rows written after that checkpoint.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace netspec::report {

using Row = std::vector<std::pair<std::string, std::optional<double>>>;  // first key: "epoch"

class MetricsLog {
 public:
  // dir empty: rows are kept in memory only.
  MetricsLog(std::string dir, int keep_through);
  void append(const Row& row);
  const std::vector<Row>& rows() const { return rows_; }
  std::string csv_path() const;
  std::string jsonl_path() const;

 private:
  std::string dir_;
  std::vector<Row> rows_;
};

// One CSV line (no newline): integral values without a decimal point, others shortest round-trip.
std::string csv_line(const Row& row);
std::string json_line(const Row& row);
// Parses a metrics.jsonl line back (keys in file order). Throws netspec::Error on bad JSON.
Row parse_json_line(const std::string& line);
// The value called `key` in `row`, or nullopt.
std::optional<double> get(const Row& row, const std::string& key);

}  // namespace netspec::report
