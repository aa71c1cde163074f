// Standalone detection probe modules (the seed's FD harnesses): each takes its inputs and returns
// (loss, gradients) so `netspec run` can check a detection loss or head in isolation.
//   probe-diou         main(pred [B,4,g,g], tgt [B,4,g,g], mask [B,g,g]) -> (loss, d_pred)
//                      loss = Σ mask·(1 - DIoU) (the YOLOv1 DIoU box term, yolov1.cpp)
//   probe-yolov1       main(pred [B,5+K,g,g], labels [B,6+K,g,g]) -> (loss, d_pred)  (yolov1Masked)
//   probe-anchor-loss  main(pred [B,g·g·A,5+K], labels [B,N,6]) -> (loss, d_pred): yoloAnchor on
//                      one level, stride 8, DIoU box, objectness focal γ 2, class focal γ 2
//   probe-fpn-loss     the same on three levels (g, g/2, g/4 at strides 8, 16, 32)
//   probe-fpn-neck     main(θ..., x, dy) -> (dθ..., dx): the VJP of a tiny backbone + fpnDetect
//                      (towerDepth 0) with an explicit output cotangent (no loss), emit's vjp
//                      module
//   probe-fpn-detect   main(θ..., x, labels) -> (loss, dθ..., dx): tiny backbone + fpnDetect with
//                      one shared BN tower layer + yoloAnchor loss (the whole detector DAG)
// Anchors are the seed's deterministic test anchors w = 0.02 + 0.03·i, h = 0.03 + 0.04·i of the
// image side (i = anchor index), converted to pixels.
#pragma once
#include <string>

#include "emit/emit.h"

namespace netspec::emit {

struct DetProbe {
  std::string module = "probe-diou";
  int64_t batch = 2, grid = 4, anchors = 2, classes = 3;
  DType dtype = DType::kF32;
  // false: @main is the loss function alone (inputs -> loss), for gradcheck; the fpn-neck probe
  // is then the tiny net's forward module.
  bool grad = true;
};

// "probe-diou|probe-yolov1|..." for help texts.
std::string det_probe_choices();
bool is_det_probe(const std::string& module);
Emitted emit_det_probe(const DetProbe& p);
// The tiny detector of probe-fpn-neck / probe-fpn-detect: input [2, 2g, 2g] -> convBn s2 x3 ->
// C3 [3, g], C4 [4, g/2], C5 [4, g/4] -> fpnDetect(g5 4, anchors A, oc 5 + K, tower depth); its
// loss runs at strides [2, 4, 8].
NetSpec det_probe_net(const DetProbe& p, int tower);
// The yoloAnchor options of the probes: `levels` levels from `stride` (finest, grid p.grid).
losses::LossOptions det_probe_loss(const DetProbe& p, int levels, int stride);

}  // namespace netspec::emit
