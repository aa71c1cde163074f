// Directory listings that name the entry they cannot resolve (dir_list.h).
#include "data/dir_list.h"

#include "core/error.h"

namespace netspec::data {
namespace {

namespace fs = std::filesystem;

// The kind of an entry from its status; ENOENT (a dangling link) is simply no file.
EntryKind kind_of(std::string_view where, const fs::path& p, const fs::file_status& st,
                  const std::error_code& ec) {
  if (ec && st.type() != fs::file_type::not_found)
    fail(where, "{}: cannot follow ({})", p.string(), ec.message());
  if (st.type() == fs::file_type::directory) return EntryKind::kDirectory;
  if (st.type() == fs::file_type::regular) return EntryKind::kRegular;
  return EntryKind::kOther;
}

}  // namespace

std::vector<DirEntry> list_dir(std::string_view where, const fs::path& dir) {
  std::vector<DirEntry> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code sec;
    const fs::file_status st = it->status(sec);
    out.push_back({it->path(), kind_of(where, it->path(), st, sec)});
  }
  if (ec) fail(where, "{}: cannot list the directory ({})", dir.string(), ec.message());
  return out;
}

EntryKind entry_kind(std::string_view where, const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  return kind_of(where, path, st, ec);
}

}  // namespace netspec::data
