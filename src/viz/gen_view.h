// The report page's sections of generative runs: a diffusion run's noise-prediction MSE on the
// evaluation split (as `eval` scores it) and a grid of DDIM samples; a text run's validation loss
// and bits per character and text generated from a prompt (as `netspec generate`); an
// autoencoder's reconstruction MSE and its reconstructions.
#pragma once
#include <string>

#include "data/datasets.h"
#include "exec/backend.h"
#include "report/progress.h"
#include "viz/model.h"

namespace netspec::viz {

// Each prints its evaluation's progress to `log` (report::EvalProgress).
// ids evaluation, samples; `samples` images drawn by DDIM with `ddim` steps from seed 0.
std::string ddpm_report_sections(const Model& m, const data::Dataset& test, const std::string& what,
                                 exec::Backend& be, int samples, int ddim, double& seconds,
                                 const report::EvalLog& log = {});

// ids evaluation, generated: the loss and bits per character on sp.test (sp.text's validation
// windows in the run's vocabulary, as `eval` scores them) beside the unigram baseline, and
// `tokens` characters generated (as `netspec generate`, the last checkpoint) greedily and by
// sampling at temperature 0.8 from seed 0 after a prompt: the first line of the first window
// (at most 24 characters).
std::string text_report_sections(const Model& m, const data::Splits& sp, const std::string& run_dir,
                                 const std::string& backend, exec::Backend& be, int tokens,
                                 double& seconds, const report::EvalLog& log = {});

// ids evaluation, reconstructions: an autoencoder's (regression task: target = input)
// reconstruction MSE over every sample of `test` (as training's validation folds it) and, for
// images, the first `shown` samples beside their reconstructions.
std::string regression_report_sections(const Model& m, const data::Dataset& test,
                                       const std::string& what, exec::Backend& be, int shown,
                                       double& seconds, const report::EvalLog& log = {});

}  // namespace netspec::viz
