// Repeated augmentation (Hoffer et al. 2020; timm RepeatAugSampler, one replica): an epoch takes
// a seeded permutation of the N samples, repeats each index k times in place
// ([p0 ×k, p1 ×k, ...]) and keeps the first floor(N/256)·256 (N when N < 256), so an epoch stays
// ~N samples long with ~N/k distinct images, each seen k times with independent augmentation
// draws. The trainer's loader then shuffles these rows (the seed's approximation: the copies
// spread across batches).
#pragma once
#include <cstdint>
#include <vector>

#include "data/dataset.h"

namespace netspec::data {

// The permutation of 0..n-1 for (seed, epoch) (Fisher-Yates on counter-based draws).
std::vector<int64_t> ra_permutation(int64_t n, uint64_t seed, int64_t epoch);
// The epoch's rows from permutation `perm` (size n) with k repeats.
std::vector<int64_t> repeated_aug_rows(const std::vector<int64_t>& perm, int k);
// The epoch's training set: take_rows of those rows.
Dataset repeated_aug_epoch(const Dataset& ds, int k, uint64_t seed, int64_t epoch);

}  // namespace netspec::data
