// Named datasets (see datasets.h).
#include "data/datasets.h"

#include <cstring>

#include "core/error.h"

namespace netspec::data {

Splits load_dataset(DatasetKind kind, const std::string& dir, int64_t limit) {
  Splits s;
  if (kind == DatasetKind::fashionMnist || kind == DatasetKind::mnist) {
    bool f = kind == DatasetKind::fashionMnist;
    std::string d = !dir.empty() ? dir
                    : f          ? std::string(kFashionMnistDir)
                                 : std::string("/usr/share/datasets/mnist");
    float mean = f ? kFashionMean : kMnistMean;
    float sd = f ? kFashionStd : kMnistStd;
    s.train = load_idx_split(d, true, mean, sd);
    s.test = load_idx_split(d, false, mean, sd);
  } else {
    fail("data", "dataset {} is not supported yet (have: fashionMnist, mnist)", enum_name(kind));
  }
  if (limit > 0 && limit < s.train.size()) {
    Shape xs = s.train.x.shape();
    xs[0] = limit;
    Tensor x(DType::kF32, xs), y(DType::kI32, {limit});
    std::memcpy(x.raw(), s.train.x.raw(), x.nbytes());
    std::memcpy(y.raw(), s.train.y.raw(), y.nbytes());
    s.train = {x, y};
  }
  return s;
}

}  // namespace netspec::data
