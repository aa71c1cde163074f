// Directory listings for the dataset readers. Each entry's kind is resolved through symbolic
// links without throwing: a dangling link is skipped as before (it is no file), but an entry
// that cannot be resolved (a link loop, no permission) is refused naming it
// (`[image-folder] d/cat/x.jpg: cannot follow (Too many levels of symbolic links)`) instead of
// surfacing as a raw std::filesystem error ("internal error", exit 3).
#pragma once
#include <filesystem>
#include <string_view>
#include <vector>

namespace netspec::data {

enum class EntryKind { kDirectory, kRegular, kOther };

struct DirEntry {
  std::filesystem::path path;
  EntryKind kind;
};

// The entries of `dir` in the order the file system gives them; fails naming `where`.
std::vector<DirEntry> list_dir(std::string_view where, const std::filesystem::path& dir);

// The kind of `path` through links (kOther when it does not exist); fails naming the path when
// its status cannot be read (a link loop).
EntryKind entry_kind(std::string_view where, const std::filesystem::path& path);

}  // namespace netspec::data
