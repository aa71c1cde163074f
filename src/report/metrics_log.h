// Metrics in the run directory: per epoch metrics.csv (header + one row per epoch) and
// metrics.jsonl (one JSON object per epoch); per step steps.csv / steps.jsonl (same format, keyed
// by "step", buffered and written by flush()). A row is an ordered list of named numbers; a missing
// value (no evaluation that epoch) is an empty CSV cell and a JSON null. Opening keeps only rows
// with `key` (epoch / step) <= keep_through, so a run resumed from a checkpoint never duplicates
// rows or keeps rows written after that checkpoint. The files hold every row; the rows kept in
// memory (for the plots) may be capped, evenly thinned (DecimatedRows).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace netspec::report {

using Row = std::vector<std::pair<std::string, std::optional<double>>>;  // first key: "epoch"

// At most `cap` rows of a growing series, for a plot: every row while there are few; past the cap
// every second row kept is dropped and the stride doubles, so the kept rows are rows 0, s, 2s, ...
// of all added (s a power of 2, the same spacing over the whole run: the curve keeps its shape),
// plus always the latest row (the plot reaches the present). cap 0: every row.
class DecimatedRows {
 public:
  explicit DecimatedRows(size_t cap = 0);
  void add(Row row);
  const std::vector<Row>& rows() const { return rows_; }
  int64_t added() const { return added_; }
  int64_t stride() const { return stride_; }

 private:
  size_t cap_;
  int64_t added_ = 0, stride_ = 1;
  bool off_grid_ = false;  // rows_.back() is the latest row, not one of 0, s, 2s, ...
  std::vector<Row> rows_;
};

// The rows steps.csv keeps in memory for loss.png: ~100 kB however long the run.
inline constexpr size_t kPlotRows = 4096;

class MetricsLog {
 public:
  // dir empty: rows are kept in memory only. Files: <stem>.csv and <stem>.jsonl. max_rows > 0:
  // rows() keeps at most that many (DecimatedRows); the files still get every row.
  MetricsLog(std::string dir, int64_t keep_through, std::string stem = "metrics",
             std::string key = "epoch", size_t max_rows = 0);
  ~MetricsLog();
  // Appends a row; written to the files now when `write`, else at the next flush().
  void append(const Row& row, bool write = true);
  // Appends the pending rows (O_NOFOLLOW: never through a planted symlink). A failed write is an
  // Error naming the file (rows are never lost silently).
  void flush();
  const std::vector<Row>& rows() const { return rows_.rows(); }
  std::string csv_path() const;
  std::string jsonl_path() const;

 private:
  std::string dir_, stem_;
  DecimatedRows rows_;
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
// max_rows > 0: at most that many, thinned as DecimatedRows does.
std::vector<Row> read_jsonl(const std::string& path, size_t max_rows = 0);
// The same rows handed to `f` one by one, the file memory-mapped (never held as rows).
void for_each_jsonl(const std::string& path, const std::function<void(Row&&)>& f);
// The value called `key` in `row`, or nullopt.
std::optional<double> get(const Row& row, const std::string& key);

}  // namespace netspec::report
