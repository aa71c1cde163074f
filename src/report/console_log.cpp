// The console tee behind RUN/train.log (see console_log.h).
#include "report/console_log.h"

#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "core/file_check.h"

namespace netspec::report {

class ConsoleLog::Buf final : public std::streambuf {
 public:
  explicit Buf(std::streambuf* console) : console_(console) {}

  void attach(const std::string& path, const std::string& separator) {
    std::error_code ec;
    const bool has_text = std::filesystem::file_size(path, ec) > 0 && !ec;
    path_ = path;
    std::string head = has_text ? separator + "\n" : "";
    write_file(head + std::move(early_));
    early_.clear();
  }
  // Only into a log still there: a refused command's new run dir was removed with its log.
  void record(const std::string& line) {
    line_.clear();
    escape_ = 0;
    std::error_code ec;
    if (!path_.empty() && std::filesystem::exists(path_, ec)) write_file(line + "\n");
  }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    if (console_->sputc(ch) == traits_type::eof()) return traits_type::eof();
    shown(ch);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const std::streamsize put = console_->sputn(s, n);
    for (std::streamsize i = 0; i < put; ++i) shown(s[i]);
    return put;
  }
  int sync() override { return console_->pubsync(); }

 private:
  // The file's view of one character, as a terminal renders it: ESC '[' params final-byte
  // sequences vanish, '\r' returns to the line's start (the next text replaces it), '\n' ends it.
  void shown(char ch) {
    if (escape_ == 1) {
      escape_ = ch == '[' ? 2 : 0;
      return;
    }
    if (escape_ == 2) {
      if (ch >= 0x40 && ch <= 0x7e) escape_ = 0;
      return;
    }
    if (ch == '\x1b') {
      escape_ = 1;
    } else if (ch == '\r') {
      line_.clear();
    } else if (ch == '\n') {
      line_ += '\n';
      if (path_.empty())
        early_ += line_;
      else
        write_file(line_);
      line_.clear();
    } else {
      line_ += ch;
    }
  }
  void write_file(const std::string& text) {
    if (path_.empty() || text.empty() || failed_) return;
    try {
      append_file(path_, text, "train.log");
    } catch (const Error& e) {
      failed_ = true;  // the run goes on; only its copy of the console stops
      std::cerr << "note: " << e.what() << " (train.log is not written further)\n";
    }
  }

  std::streambuf* console_;
  std::string path_, line_, early_;
  int escape_ = 0;  // 0 text, 1 after ESC, 2 inside ESC [ ...
  bool failed_ = false;
};

ConsoleLog::ConsoleLog(std::ostream& console)
    : buf_(std::make_unique<Buf>(console.rdbuf())), out_(buf_.get()) {}

ConsoleLog::~ConsoleLog() { out_.flush(); }

void ConsoleLog::attach(const std::string& path, const std::string& separator) {
  out_.flush();
  buf_->attach(path, separator);
}

void ConsoleLog::record(const std::string& line) {
  out_.flush();
  buf_->record(line);
}

}  // namespace netspec::report
