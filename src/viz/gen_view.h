// The report page's sections of generative runs: a diffusion run's noise-prediction MSE on the
// evaluation split (as `eval` scores it) and a grid of DDIM samples; a text run's validation loss
// and bits per character from its metrics and text generated from a prompt (as `netspec
// generate`).
#pragma once
#include <string>

#include "data/datasets.h"
#include "exec/backend.h"
#include "viz/model.h"

namespace netspec::viz {

// ids evaluation, samples; `samples` images drawn by DDIM with `ddim` steps from seed 0.
std::string ddpm_report_sections(const Model& m, const data::Dataset& test, const std::string& what,
                                 exec::Backend& be, int samples, int ddim, double& seconds);

}  // namespace netspec::viz
