// `netspec predict` of a segmentation net (tasks::task_kind: a perPixel* loss; cmd_predict.cpp
// hands it here): per image the predicted class map's pixel fractions per class (printed, or as
// JSON with --json); --png OUT.png draws each image beside its prediction (the class colours
// blended over it) with a legend of the class names; a mask PNG per image, IMAGE_STEM.mask.png
// (8-bit gray, the class index per pixel, at the image's own size: sliding windows over the whole
// image, viz/seg_slide.h) goes to --masks DIR, else next to --png. Fractions count those pixels.
#pragma once
#include <string>
#include <vector>

#include "exec/backend.h"
#include "spec/param_table.h"
#include "spec/spec_json.h"

namespace netspec::cli {

struct PredictSegOptions {
  const SpecFile* spec = nullptr;
  const TrainConfig* config = nullptr;  // the run's, with --dataset applied
  const ParamTable* table = nullptr;
  std::string checkpoint, png, masks, backend = "cpu";
  exec::BackendOptions engine;
  std::vector<std::string> images, names;  // names: the class names (may be short or empty)
  bool json = false;
};
void predict_segmentation(const PredictSegOptions& o);

}  // namespace netspec::cli
