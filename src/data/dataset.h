// An in-memory labelled split: x [N, ...] and y [N, ...] with one row per sample. Image data is
// either stored normalised (f32) or, to keep memory at one byte per pixel, as raw ui8 pixels
// [N, C, H, W] with a per-channel mean/std that the Loader applies when it assembles a batch:
// (v / 255 - mean[c]) / std[c], or a dataset's own 256-entry table per channel (pixel_values).
// Text windows are i32 token ids with i32 next-token labels.
#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace netspec::data {

class SampleSource;  // sample_source.h

struct Dataset {
  Dataset() = default;
  Dataset(Tensor x_, Tensor y_, std::vector<float> mean_ = {}, std::vector<float> std_ = {},
          std::vector<float> black_ = {}, std::vector<float> pixel_values_ = {})
      : x(std::move(x_)),
        y(std::move(y_)),
        mean(std::move(mean_)),
        std(std::move(std_)),
        black(std::move(black_)),
        pixel_values(std::move(pixel_values_)) {}

  Tensor x;  // f32 [N, ...] (stored normalised), ui8 [N, C, H, W] (raw pixels), or i32 [N, T]
  Tensor y;  // i32 [N] class labels, or i32 [N, T] next tokens
  // ui8 x only: per-channel normalisation applied at batch time (size C).
  std::vector<float> mean, std;
  // f32 x only: the stored value of a black pixel per channel (augmentation's crop padding,
  // torchvision pads the raw image with 0 before Normalize); empty -> 0.
  std::vector<float> black;
  // ui8 x only, optional: the normalised value of each byte, 256 per channel, used instead of
  // (v / 255 - mean) / std (IDX sets keep the rounding of their former f32 storage).
  std::vector<float> pixel_values;
  // Streamed (sample_source.h): x is then shape-only (no storage) and the Loader reads each
  // sample's ui8 pixels from here when it assembles a batch.
  std::shared_ptr<const SampleSource> source;
  bool streamed() const { return source != nullptr; }
  int64_t size() const { return x.shape().empty() ? 0 : x.shape()[0]; }
};

// Per-channel normalisation constants (train-set statistics of pixel values in [0, 1]).
struct Normalization {
  std::vector<float> mean, std;
};
inline const Normalization kImageNetNorm{{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};
inline const Normalization kCifar10Norm{{0.4914f, 0.4822f, 0.4465f}, {0.2470f, 0.2435f, 0.2616f}};

// The first n samples (shares nothing with `ds`); n >= size() returns ds unchanged.
Dataset take_first(const Dataset& ds, int64_t n);
// The samples at `rows` in that order (copied).
Dataset take_rows(const Dataset& ds, const std::vector<int64_t>& rows);

}  // namespace netspec::data
