// The report page's sections of a NeRF run (the nerf task): the PSNR of every held-out view
// rendered from the checkpoint (as training's validation renders it: interval midpoints, the
// host volume renderer) and each view's rendering beside its truth.
#pragma once
#include <string>

#include "data/datasets.h"
#include "exec/backend.h"
#include "report/progress.h"
#include "viz/model.h"

namespace netspec::viz {

// ids evaluation, renders: overall and per-view PSNR on sp.test (sp.views gives the layout) and
// the first `shown` views as rendering | truth pictures.
std::string nerf_report_sections(const Model& m, const data::Splits& sp, const std::string& what,
                                 exec::Backend& be, int shown, double& seconds,
                                 const report::EvalLog& log = {});

}  // namespace netspec::viz
