// CIFAR-10 binary batches (the "binary version", cifar-10-binary.tar.gz): DIR/data_batch_1..5.bin
// (train) and DIR/test_batch.bin, each a run of 3073-byte records: a label byte (< 10) then 3072
// pixel bytes, R, G and B planes of 32x32. Kept as raw ui8 [N, 3, 32, 32]; the Loader normalises
// with kCifar10Norm. Errors name the file and the fault:
// `[cifar10] DIR/data_batch_3.bin: size 1000 is not a multiple of 3073`.
#pragma once
#include <string>

#include "data/dataset.h"

namespace netspec::data {

inline constexpr int64_t kCifarRecord = 3073;

// One batch file -> x ui8 [N, 3, 32, 32], y i32 [N] (mean/std set to kCifar10Norm).
Dataset read_cifar10_batch(const std::string& path);
// train: the five data batches concatenated in order; else test_batch.bin. An empty dir fails
// with where to put which files.
Dataset load_cifar10_split(const std::string& dir, bool train);

}  // namespace netspec::data
