// `netspec predict RUN_DIR IMAGE...` for detectors trained by `netspec train` (cmd_predict.cpp
// hands a run directory here): boxes per image after decode + per-class NMS, printed, as JSON
// (--json) and drawn with their class names and scores into one PNG (--png, images side by side,
// enlarged to >= 384 px high). The default score threshold is low (0.05): the yoloAnchor
// objectness is a mean over every row, so true boxes score ~0.1-0.3 (docs/detection.md).
#pragma once
#include <string>
#include <vector>

#include "exec/backend.h"

namespace netspec::cli {

struct PredictDetOptions {
  std::string run_dir, png, backend = "cpu";
  exec::BackendOptions engine;
  std::vector<std::string> images;
  bool json = false;
  double iou = 0.5, score = 0.05;
  int64_t max_det = 100;
};
void predict_run_dir(const PredictDetOptions& o);

}  // namespace netspec::cli
