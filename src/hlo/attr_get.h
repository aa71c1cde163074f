// Implementation detail of Attrs::get (see attr.h).
#pragma once
#include "core/error.h"

namespace netspec::hlo {

template <typename T>
const T& Attrs::get(const std::string& name) const {
  auto* v = find(name);
  if (!v) fail("attrs", "missing attribute '{}'", name);
  auto* p = std::get_if<T>(v);
  if (!p) fail("attrs", "attribute '{}' has the wrong kind", name);
  return *p;
}

}  // namespace netspec::hlo
