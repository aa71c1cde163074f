#include "core/file_check.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace netspec {

void require_regular_file(std::string_view where, const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    fail(where, "cannot read '{}' ({})", path, std::strerror(errno));
  if (S_ISREG(st.st_mode)) return;
  const char* kind = S_ISDIR(st.st_mode)                          ? "a directory"
                     : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                     : S_ISSOCK(st.st_mode)                       ? "a socket"
                                                                  : "not a regular file";
  fail(where, "cannot read '{}': it is {} (expected a regular file)", path, kind);
}

}  // namespace netspec
