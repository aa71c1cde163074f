// Refuses paths that are not regular files before they are opened: a directory would read as
// empty text, /dev/zero would read forever and opening a FIFO blocks until a writer comes.
#pragma once
#include <string>
#include <string_view>

namespace netspec {

// Throws `[where] cannot read 'path': it is a directory (expected a regular file)` (or a FIFO,
// a device, a socket, or does not exist). Symbolic links are followed.
void require_regular_file(std::string_view where, const std::string& path);

}  // namespace netspec
