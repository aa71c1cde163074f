#include "hlo/attr.h"

#include <cstring>

namespace netspec::hlo {

bool DenseAttr::operator==(const DenseAttr& o) const {
  return value.dtype() == o.value.dtype() && value.shape() == o.value.shape() &&
         (value.nbytes() == 0 || std::memcmp(value.raw(), o.value.raw(), value.nbytes()) == 0);
}

const AttrValue* Attrs::find(const std::string& name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

}  // namespace netspec::hlo
