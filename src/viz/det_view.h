// Looking at a detection run: boxes drawn on images (a colour per class, labelled with the class
// name and score; `netspec predict` of a detector's run dir draws with these too) and the report
// page's section: mAP@0.5 and mAP@[.5:.95] overall and per class under the class names, and
// panels of a few evaluation images with their predicted boxes beside the ground truth.
#pragma once
#include <string>
#include <vector>

#include "data/datasets.h"
#include "data/det_data.h"
#include "exec/backend.h"
#include "report/canvas.h"
#include "report/progress.h"
#include "viz/model.h"

namespace netspec::viz {

// Class k's box colour.
report::Rgb box_colour(int k);
// A `thick`-pixel outline of b (pixels) offset by (ox, oy).
void draw_box(const report::Canvas& c, double ox, double oy, const data::Box& b, report::Rgb col,
              double thick = 2);
// The outline and, above it (inside when at the top edge), `label` on a dark band.
void draw_labelled_box(const report::Canvas& c, double ox, double oy, const data::Box& b,
                       report::Rgb col, const std::string& label);

// The report's evaluation sections of a detection run over sp.test / sp.det->test (ids
// evaluation, per-class, boxes); `shown` images in the box panels. `seconds` gets the time spent;
// the evaluation's progress goes to `log`.
std::string det_report_sections(const Model& m, const data::Splits& sp, const std::string& what,
                                exec::Backend& be, int shown, double& seconds,
                                const report::EvalLog& log = {});

}  // namespace netspec::viz
