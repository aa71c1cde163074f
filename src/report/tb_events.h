// TensorBoard event files written without TensorFlow or protobuf. A file is a sequence of
// TFRecords: uint64 length (little-endian), masked CRC32C of those 8 bytes, the payload, masked
// CRC32C of the payload. Each payload is a hand-encoded tensorflow.Event protobuf: wall_time
// (double, field 1), step (int64, field 2), and either file_version (field 3, the first record:
// "brain.Event:2") or a Summary (field 5) of Values {tag (1), simple_value (2, float)} or a text
// tensor {tag (1), metadata (9: plugin "text"), tensor (8: DT_STRING scalar)}.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace netspec::report {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as iSCSI and TFRecord use it:
// crc32c("123456789") = 0xE3069283.
uint32_t crc32c(std::string_view bytes);
// TFRecord's masking of a CRC: rotate right by 15 bits, add 0xA282EAD8.
uint32_t masked_crc32c(std::string_view bytes);
// One TFRecord around `payload`.
std::string tf_record(std::string_view payload);

using Scalars = std::vector<std::pair<std::string, double>>;
// Event payloads (protobuf bytes).
std::string event_file_version(double wall_time);
std::string event_scalars(double wall_time, int64_t step, const Scalars& values);
std::string event_text(double wall_time, int64_t step, const std::string& tag,
                       const std::string& text);
// The HParams dashboard's session start: a Value tagged "_hparams_/session_start_info" whose
// metadata is plugin "hparams" with content HParamsPluginData{session_start_info (3):
// SessionStartInfo{hparams (1): map<string, google.protobuf.Value{number 2 | string 3 | bool 4}>,
// start_time_secs (5)}} (TensorBoard infers the experiment from it and the run's scalars).
using HParams = std::vector<std::pair<std::string, std::variant<double, std::string, bool>>>;
std::string event_hparams(double wall_time, int64_t step, const HParams& hparams);

// The records of an event file's bytes. A torn last record (a killed writer) ends the list;
// a length or CRC that does not check anywhere else sets *bad (when given) and ends it too.
std::vector<std::string> read_tf_records(std::string_view bytes, bool* bad = nullptr);
// The step (field 2) of an Event payload; 0 when absent.
int64_t event_step(std::string_view event);

// True for names this writer gives its files (events.out.tfevents.*).
bool is_event_file_name(std::string_view name);

// Appends events to a new file DIR/events.out.tfevents.<unix seconds>.<host>.<n> (n makes the
// name new and sort after the dir's other event files, so readers take them in order). The
// file_version record is written at once; later records are buffered until flush().
class EventWriter {
 public:
  explicit EventWriter(const std::string& dir);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;
  void scalars(int64_t step, const Scalars& values);
  void text(int64_t step, const std::string& tag, const std::string& text);
  void hparams(int64_t step, const HParams& hparams);
  // Appends the buffered records (O_NOFOLLOW); a failed write is an Error naming the file.
  void flush();
  const std::string& path() const { return path_; }

 private:
  std::string path_, pending_;
};

// A resume from the checkpoint at `keep_through` updates: every event file of `dir` keeps only
// its records with step <= keep_through (the steps logged after that checkpoint are trained
// again) and loses a torn last record; a file whose records do not check is left as it is.
// Rewritten atomically, only when something is dropped.
void truncate_event_files(const std::string& dir, int64_t keep_through);

}  // namespace netspec::report
