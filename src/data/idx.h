// IDX files (MNIST, Fashion-MNIST): gzip-compressed or raw, checked (magic, element type, dims)
// before the data is inflated, then read up to the size the dims declare. Images stay bytes
// ui8 [N, 1, rows, cols] (or become f32 scaled to [0, 1] then normalised, (v - mean) / std);
// labels become i32 [N]. Every error names the file and the fault:
// `[idx] /d/train-images-idx3-ubyte.gz: truncated (got 1000 bytes, expected 47040016)`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/dataset.h"

namespace netspec::data {

// idx3 ubyte images -> ui8 [N, 1, rows, cols], the pixels as stored.
Tensor read_idx_bytes(const std::string& path);
// idx3 ubyte images -> f32 [N, 1, rows, cols], (v/255 - mean) / std (idx_pixel_values).
Tensor read_idx_images(const std::string& path, float mean = 0.f, float std = 1.f);
// The normalised value of each byte v, v·(1/(255·std)) - mean/std in f32 (256 entries).
std::vector<float> idx_pixel_values(float mean, float std);
// idx1 ubyte labels -> i32 [N]; every label must be < num_classes.
Tensor read_idx_labels(const std::string& path, int num_classes = 10);

// Fashion-MNIST normalisation (train-set mean/std of the pixel values in [0, 1]).
inline constexpr float kFashionMean = 0.2860f, kFashionStd = 0.3530f;
inline constexpr float kMnistMean = 0.1307f, kMnistStd = 0.3081f;
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Loads `<dir>/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]`; train = false -> t10k.
// Checks image and label counts agree. Throws naming the directory when a file is missing.
// Images stay ui8 with mean/std and pixel_values set; the Loader normalises each batch.
Dataset load_idx_split(const std::string& dir, bool train, float mean, float std);

}  // namespace netspec::data
