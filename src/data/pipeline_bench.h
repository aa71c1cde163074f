// `netspec data bench`: images/s of the streamed image pipeline alone (decode, resize, crop,
// flip, normalise into batch tensors on the decode threads, through the Prefetcher), no step.
#pragma once
#include <cstdint>
#include <string>

namespace netspec::data {

// dataset folder|imagenet|packed; dir an image-folder tree or a pack; input "CxHxW"; augment
// "train" (the training split with the standard crop + flip), "rrc" (RandomResizedCrop + flip
// of the whole images, view.h) or "eval" (the test split, in order);
// threads 0: decode_threads(); batches 0: one epoch. Returns the report line.
std::string bench_pipeline(const std::string& dataset, const std::string& dir,
                           const std::string& input, const std::string& augment, int threads,
                           int64_t batch, int64_t batches);

}  // namespace netspec::data
