// Safe file access for every path netspec reads or writes. Reading refuses paths that are not
// regular files before they are opened (a directory would read as empty text, /dev/zero would
// read forever and opening a FIFO blocks until a writer comes); the open itself is non-blocking
// and re-checked with fstat. Writes go to an exclusively created temp file that is renamed over
// the target, so readers never see a partial file and a planted link is never followed.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace netspec {

// Throws `[where] cannot read 'path': it is a directory (expected a regular file)` (or a FIFO,
// a device, a socket, or does not exist). Symbolic links are followed.
void require_regular_file(std::string_view where, const std::string& path);

// Opens a regular file read-only without ever blocking (O_NONBLOCK, then fstat); returns the
// file descriptor (the caller closes it) or throws as require_regular_file does.
int open_regular_file(std::string_view where, const std::string& path);

// The whole content of a regular file; read errors carry errno's text.
std::string read_regular_file(std::string_view where, const std::string& path);

// A read-only memory map of a regular file (empty files map to an empty view).
class MappedFile {
 public:
  MappedFile(std::string_view where, const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Creates directory `path` (and its parents) if needed and checks that files can be created in
// it; a path that is a file, under /proc or read-only is named: `[where] run dir 'x': ...`.
void ensure_writable_dir(std::string_view where, const std::string& path,
                         std::string_view what = "directory");

// Writes `bytes` to PATH.<pid>.<n>.tmp, a name no other writer uses (concurrent writers of one
// PATH never share a temp file), created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW: a planted
// symlink is refused, never followed), then renames it over PATH. Errors name the file and carry
// errno's text.
void write_file_atomic(const std::string& path, std::string_view bytes,
                       std::string_view where = "write");
// The same, the content given piece by piece: `produce` calls its sink with each chunk in order
// (a long file is rewritten without holding it whole).
using ChunkSink = std::function<void(std::string_view)>;
void write_file_atomic(const std::string& path,
                       const std::function<void(const ChunkSink&)>& produce,
                       std::string_view where = "write");

// True for the temp names write_file_atomic uses for `name` (NAME.<pid>.<n>.tmp, and NAME.tmp of
// older versions): what a killed writer leaves behind.
bool is_atomic_temp_of(std::string_view file, std::string_view name);

// Appends `bytes` to PATH (created 0666 when absent). Opened with O_NOFOLLOW|O_NONBLOCK and
// checked with fstat, so a symlink planted there is refused, not followed, and a FIFO never
// blocks; a failed or short write (ENOSPC, EFBIG, EIO) is an Error naming the file.
void append_file(const std::string& path, std::string_view bytes, std::string_view where = "write");

}  // namespace netspec
