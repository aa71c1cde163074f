// `netspec report RUN_DIR`: report.html, one self-contained page (CSS inline, pictures as
// base64 PNG data URIs, no script, opens without a network): the resolved config and net summary,
// the training curves, the confusion matrix and per-class accuracy on the evaluation split, the
// most confidently wrong images, Grad-CAM for a few samples, and timings. Every section has an id
// (config, net, curves, evaluation, confusion, per-class, wrong, gradcam, timings).
#pragma once
#include <cstdint>
#include <string>

namespace netspec::viz {

struct ReportOptions {
  std::string run_dir;
  std::string data_dir;  // dataset directory (default: the dataset's default location)
  std::string backend = "cpu";
  int64_t limit = 0;  // > 0: evaluate on this many test samples (evenly strided)
  int wrong = 12;     // most confidently wrong images shown
  int cam = 4;        // Grad-CAM samples
  std::string out;    // default RUN_DIR/report.html
};

// Writes the page and returns its path.
std::string write_report(const ReportOptions& o);

// Escapes &, <, >, " for HTML text and attributes.
std::string html_escape(const std::string& s);

}  // namespace netspec::viz
