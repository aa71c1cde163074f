// CIFAR-10 binary reader (see cifar.h).
#include "data/cifar.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/file_check.h"

namespace netspec::data {
Dataset read_cifar10_batch(const std::string& path) {
  const std::string b = read_regular_file("cifar10", path);
  if (b.empty() || b.size() % kCifarRecord != 0)
    fail("cifar10", "{}: size {} is not a multiple of {}", path, b.size(), kCifarRecord);
  const int64_t n = static_cast<int64_t>(b.size()) / kCifarRecord;
  Dataset ds{Tensor(DType::kUI8, {n, 3, 32, 32}),
             Tensor(DType::kI32, {n}),
             kCifar10Norm.mean,
             kCifar10Norm.std,
             {}};
  auto* x = ds.x.data<uint8_t>();
  auto* y = ds.y.data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    const auto* rec = reinterpret_cast<const uint8_t*>(b.data()) + i * kCifarRecord;
    if (rec[0] >= 10)
      fail("cifar10", "{}: label {} out of range at record {} (expected < 10)", path, rec[0], i);
    y[i] = rec[0];
    std::memcpy(x + i * 3072, rec + 1, 3072);
  }
  return ds;
}

Dataset load_cifar10_split(const std::string& dir, bool train) {
  if (dir.empty())
    fail("cifar10",
         "no data directory: pass --data DIR with DIR/data_batch_1.bin .. data_batch_5.bin and "
         "DIR/test_batch.bin (the binary version, cifar-10-binary.tar.gz; no Debian package has "
         "CIFAR-10)");
  if (!train) return read_cifar10_batch((std::filesystem::path(dir) / "test_batch.bin").string());
  std::vector<Dataset> parts;
  int64_t n = 0;
  for (int k = 1; k <= 5; ++k) {
    auto p = std::filesystem::path(dir) / ("data_batch_" + std::to_string(k) + ".bin");
    parts.push_back(read_cifar10_batch(p.string()));
    n += parts.back().size();
  }
  Dataset ds{Tensor(DType::kUI8, {n, 3, 32, 32}),
             Tensor(DType::kI32, {n}),
             kCifar10Norm.mean,
             kCifar10Norm.std,
             {}};
  size_t xo = 0, yo = 0;
  for (const Dataset& p : parts) {
    std::memcpy(static_cast<uint8_t*>(ds.x.raw()) + xo, p.x.raw(), p.x.nbytes());
    std::memcpy(static_cast<uint8_t*>(ds.y.raw()) + yo, p.y.raw(), p.y.nbytes());
    xo += p.x.nbytes();
    yo += p.y.nbytes();
  }
  return ds;
}

}  // namespace netspec::data
