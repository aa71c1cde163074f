// The whole OpKind-indexed table of one consumer (type rules, VJP rules, JAX translations),
// filled by its family files' register functions (op_family.h) in the order given.
#pragma once
#include <array>
#include <initializer_list>

#include "hlo/ir.h"

namespace netspec::hlo {

template <typename Entry>
std::array<Entry, kNumOpKinds> fill_op_table(std::initializer_list<void (*)(Entry*)> registers) {
  std::array<Entry, kNumOpKinds> t{};
  for (auto fill : registers) fill(t.data());
  return t;
}

}  // namespace netspec::hlo
