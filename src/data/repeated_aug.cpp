// See repeated_aug.h.
#include "data/repeated_aug.h"

#include "core/error.h"
#include "core/hash.h"

namespace netspec::data {

std::vector<int64_t> ra_permutation(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  const uint64_t k = splitmix64(splitmix64(seed ^ 0x7261ULL) ^ static_cast<uint64_t>(epoch));
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(splitmix64(k ^ static_cast<uint64_t>(i)) %
                                        static_cast<uint64_t>(i + 1));
    std::swap(p[i], p[j]);
  }
  return p;
}

std::vector<int64_t> repeated_aug_rows(const std::vector<int64_t>& perm, int k) {
  if (k < 1) fail("repeatedAug", "repeats must be >= 1 (got {})", k);
  const auto n = static_cast<int64_t>(perm.size());
  const int64_t selected = n >= 256 ? n / 256 * 256 : n;  // timm's selected_round = 256
  std::vector<int64_t> rows;
  rows.reserve(static_cast<size_t>(selected));
  for (int64_t i = 0; i < selected; ++i) rows.push_back(perm[i / k]);
  return rows;
}

Dataset repeated_aug_epoch(const Dataset& ds, int k, uint64_t seed, int64_t epoch) {
  return take_rows(ds, repeated_aug_rows(ra_permutation(ds.size(), seed, epoch), k));
}

}  // namespace netspec::data
