// `netspec report RUN_DIR`: report.html, one self-contained page (CSS inline, pictures as
// base64 PNG data URIs, no script, opens without a network): the resolved config and net summary,
// the training curves, the evaluation split's sections by the run's task (tasks::task_kind) and
// timings. The evaluation split is the run's test split, or the validation split a --val-split
// run held out. Classification: the confusion matrix, per-class accuracy, the most confidently
// wrong images, Grad-CAM (ids evaluation, confusion, per-class, wrong, gradcam); segmentation:
// mIoU, Dice, pixel accuracy, per-class IoU, image | truth | prediction panels and the worst-IoU
// images (viz/seg_view.h; ids evaluation, per-class, samples, worst); detection: mAP@0.5 and
// mAP@[.5:.95] overall and per class, and box panels (viz/det_view.h; ids evaluation, per-class,
// boxes); diffusion: the noise-prediction MSE and a DDIM sample grid (viz/gen_view.h; ids
// evaluation, samples); text: loss and bits per character, generated text (ids evaluation,
// generated). Every page has the ids config, net, curves and timings.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>

#include "data/datasets.h"

namespace netspec::viz {

struct ReportOptions {
  std::string run_dir;
  std::string backend = "cpu";
  int wrong = 12;               // most confidently wrong images shown
  int cam = 4;                  // Grad-CAM samples
  int panels = 4;               // segmentation / detection: images per picture section
  int tokens = 200;             // text: characters generated per sample
  std::string out;              // default RUN_DIR/report.html
  std::ostream* log = nullptr;  // the evaluation's progress (a bar on a terminal); nullptr: quiet
  bool tty = false;
};

// The samples the evaluation sections score, chosen by the caller (the run's data and split:
// `netspec report` takes them from RUN/config.json as `eval` does).
struct ReportData {
  data::Splits splits;  // splits.test is scored (text corpora: a note instead)
  std::string what;     // "the validation split held out by --val-split 0.25 (15 samples)"
  std::string error;    // set: the data could not be loaded, and the page says why
};

// Writes the page and returns its path.
std::string write_report(const ReportOptions& o, const ReportData& d);

// Escapes &, <, >, " for HTML text and attributes.
std::string html_escape(const std::string& s);
// An <img> with the PNG bytes inline as a data URI.
std::string img_tag(const std::string& png, const std::string& alt);

}  // namespace netspec::viz
