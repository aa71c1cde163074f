// The trainer's console stream, kept in RUN/train.log as the console showed it: a tee of
// everything written to the stream, where the file gets each finished line as a terminal would
// leave it (a carriage return starts the line over, ANSI escapes such as the progress bar's
// erase-line are dropped), so the bar's redraws never reach the file but the epoch lines do.
// Lines written before the log file is known (the run dir is not locked yet) are kept and
// written when it is attached.
#pragma once
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

namespace netspec::report {

class ConsoleLog {
 public:
  explicit ConsoleLog(std::ostream& console);
  ~ConsoleLog();
  ConsoleLog(const ConsoleLog&) = delete;
  ConsoleLog& operator=(const ConsoleLog&) = delete;
  std::ostream& stream() { return out_; }
  // Appends to `path` from now on (each line as it completes, so a kill loses at most the
  // unfinished line): first `separator` + '\n' when the file already holds text (a resume), then
  // the lines written so far. A failed write stops the log with one note on stderr; the console
  // goes on.
  void attach(const std::string& path, const std::string& separator);
  // Appends `line` to the log file only (once attached and while the file exists; a refused
  // command's new run dir is removed with it): the fatal error that main() prints on stderr
  // after the run ended. An unfinished console line (a bar) is dropped.
  void record(const std::string& line);

 private:
  class Buf;
  std::unique_ptr<Buf> buf_;
  std::ostream out_;
};

}  // namespace netspec::report
