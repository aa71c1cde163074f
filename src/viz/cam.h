// Grad-CAM of a trained classifier or segmenter: runs the grad_cam module (logits, cam features
// and d(logit_K)/d(features)) on a backend, turns each row into the Grad-CAM map
// (report::grad_cam_map) and draws the input | overlay panel. A segmenter (per-pixel logits)
// explains the class-K logits summed over the pixels it predicts as K (pytorch-grad-cam's
// SemanticSegmentationTarget).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exec/backend.h"
#include "viz/model.h"

namespace netspec::viz {

struct CamOut {
  std::vector<double> probs;  // softmax of the logits; per-pixel nets: each class's pixel share
  bool per_pixel = false;
  int64_t cls = 0;            // the class K explained
  std::vector<double> map;    // [h, w] at the feature map's resolution
  int64_t h = 0, w = 0;
};

class GradCam {
 public:
  GradCam(const Model& m, int64_t batch, exec::Backend& backend);
  // x: [batch, ...]; rows >= n are padding. cls < 0: each row explains its top class (per-pixel
  // nets: the class predicted on most pixels other than class 0, the background; 0 when none).
  std::vector<CamOut> run(const Tensor& x, int64_t n, int64_t cls = -1) const;

 private:
  const Model& m_;
  int64_t batch_;
  std::unique_ptr<exec::Executable> exe_;
  bool per_pixel() const { return m_.table.output.size() == 3; }
  std::vector<Tensor> inputs(const Tensor& x, const std::vector<int32_t>& k,
                             const Tensor* mask) const;
  // Per-pixel nets: the pixel shares of each class in rows [0, n), each row's K and its mask.
  std::vector<std::vector<double>> pixel_classes(const Tensor& logits, int64_t n, int64_t cls,
                                                 std::vector<int32_t>& k, Tensor& mask) const;
};

// The k most probable classes (name, probability), best first.
std::vector<std::pair<std::string, double>> top_k(const Model& m, const std::vector<double>& p,
                                                  size_t k);
// The Grad-CAM panel of one input picture as PNG bytes.
std::string cam_panel(const Model& m, const report::RgbImage& picture, const CamOut& c,
                      const std::string& title);

}  // namespace netspec::viz
