// Fills an OpKind-indexed table (type rules, ref kernels, cpu compilers, VJP rules) from one
// family file: each op belongs to the family ops.def gives it, and set() refuses an op of
// another family, so every folder files an op under the same key (verify_<family>.cpp,
// ref/<family>.cpp, cpu/<family>.cpp, vjp_<family>.cpp; a file may hold several families).
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "hlo/ir.h"

namespace netspec::hlo {

template <typename Entry>
class FamilyTable {
 public:
  FamilyTable(Entry* table, std::string_view file, std::initializer_list<std::string_view> families)
      : table_(table), file_(file), families_(families) {}

  void set(OpKind k, Entry e) {
    if (!holds(k))
      fail(file_, "{} is of family '{}', which this file does not hold (expected one of: {})",
           op_name(k), op_family(k), names());
    table_[static_cast<size_t>(k)] = e;
  }
  // Every op of family `family` (one of this file's) gets e.
  void set_family(std::string_view family, Entry e) {
    for (size_t i = 0; i < kNumOpKinds; ++i)
      if (op_family(static_cast<OpKind>(i)) == family) set(static_cast<OpKind>(i), e);
  }
  bool holds(OpKind k) const {
    for (std::string_view f : families_)
      if (f == op_family(k)) return true;
    return false;
  }

 private:
  std::string names() const {
    std::string s;
    for (std::string_view f : families_) s += (s.empty() ? "" : ", ") + std::string(f);
    return s;
  }
  Entry* table_;
  std::string_view file_;
  std::vector<std::string_view> families_;
};

}  // namespace netspec::hlo
