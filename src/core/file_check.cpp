#include "core/file_check.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace netspec {
namespace {

const char* kind_of(mode_t m) {
  return S_ISDIR(m)                 ? "a directory"
         : S_ISFIFO(m)              ? "a FIFO"
         : S_ISCHR(m) || S_ISBLK(m) ? "a device"
         : S_ISSOCK(m)              ? "a socket"
                                    : "not a regular file";
}

// Writes all of `bytes`; false (errno set) on an error. A write that makes no progress is ENOSPC.
bool write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = ENOSPC;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void not_regular(std::string_view where, const std::string& path, mode_t m) {
  fail(where, "cannot read '{}': it is {} (expected a regular file)", path, kind_of(m));
}

}  // namespace

void require_regular_file(std::string_view where, const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) fail(where, "{}: no such file", path);
    fail(where, "cannot read '{}' ({})", path, std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) not_regular(where, path, st.st_mode);
}

int open_regular_file(std::string_view where, const std::string& path) {
  require_regular_file(where, path);
  // Non-blocking: if the path was swapped for a FIFO since the stat, open still returns.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(where, "cannot open '{}' ({})", path, std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    fail(where, "cannot read '{}' ({})", path, std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    not_regular(where, path, st.st_mode);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string read_regular_file(std::string_view where, const std::string& path) {
  int fd = open_regular_file(where, path);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      fail(where, "cannot read '{}' ({})", path, std::strerror(e));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

MappedFile::MappedFile(std::string_view where, const std::string& path) {
  int fd = open_regular_file(where, path);
  struct stat st;
  ::fstat(fd, &st);
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data_ == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      data_ = nullptr;
      fail(where, "cannot map '{}' ({})", path, std::strerror(e));
    }
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

void ensure_writable_dir(std::string_view where, const std::string& path, std::string_view what) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    fail(where, "{} '{}' cannot be created ({})", what, path,
         ec ? ec.message() : std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    fail(where, "{} '{}' exists and is {} (expected a directory)", what, path,
         S_ISREG(st.st_mode) ? "a regular file" : kind_of(st.st_mode));
  if (::access(path.c_str(), W_OK | X_OK) != 0)
    fail(where, "{} '{}' is not writable ({})", what, path, std::strerror(errno));
}

void write_file_atomic(const std::string& path, std::string_view bytes, std::string_view where) {
  write_file_atomic(
      path, [bytes](const ChunkSink& sink) { sink(bytes); }, where);
}

void write_file_atomic(const std::string& path,
                       const std::function<void(const ChunkSink&)>& produce,
                       std::string_view where) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = fmt::format("{}.{}.{}.tmp", path, ::getpid(), counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) fail(where, "cannot create '{}' ({})", tmp, std::strerror(errno));
  int e = 0;
  try {  // the producer may throw too: the temp file never stays behind
    produce([&](std::string_view bytes) {
      if (e == 0 && !write_all(fd, bytes)) e = errno;
    });
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (e != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(where, "write to '{}' failed ({})", tmp, std::strerror(e));
  }
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    fail(where, "write to '{}' failed ({})", tmp, std::strerror(e));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    fail(where, "cannot rename '{}' to '{}' ({})", tmp, path, std::strerror(e));
  }
}

bool is_atomic_temp_of(std::string_view file, std::string_view name) {
  if (file.size() < name.size() + 4 || file.substr(0, name.size()) != name ||
      file.substr(file.size() - 4) != ".tmp")
    return false;
  if (file.size() == name.size() + 4) return true;  // NAME.tmp
  // NAME.<pid>.<n>.tmp: digits, one dot, digits between NAME. and .tmp.
  if (file.size() < name.size() + 8 || file[name.size()] != '.') return false;
  const std::string_view mid = file.substr(name.size() + 1, file.size() - name.size() - 5);
  const size_t dot = mid.find('.');
  auto digits = [](std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return dot != std::string_view::npos && digits(mid.substr(0, dot)) && digits(mid.substr(dot + 1));
}

void append_file(const std::string& path, std::string_view bytes, std::string_view where) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                  0666);
  if (fd < 0) {
    const int e = errno;
    if (e == ELOOP)
      fail(where, "cannot append to '{}': it is a symbolic link (netspec never writes through one)",
           path);
    fail(where, "cannot append to '{}' ({})", path, std::strerror(e));
  }
  struct stat st;
  const bool stat_ok = ::fstat(fd, &st) == 0;
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(where, "cannot append to '{}': it is {} (expected a regular file)", path,
         stat_ok ? kind_of(st.st_mode) : "unreadable");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (!write_all(fd, bytes)) {
    const int e = errno;
    ::close(fd);
    fail(where, "appending {} bytes to '{}' failed ({})", bytes.size(), path, std::strerror(e));
  }
  if (::close(fd) != 0) fail(where, "appending to '{}' failed ({})", path, std::strerror(errno));
}

}  // namespace netspec
