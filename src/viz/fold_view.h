// The report page's sections of a protein-fold run (lossKind af2Fold): AlphaFold 2's metrics over
// every chain of the evaluation split (as training's validation scores them: FAPE, lDDT-Cα,
// distogram cross-entropy) and, for the first chains, the true and predicted Cα distance maps
// side by side.
#pragma once
#include <string>

#include "data/datasets.h"
#include "exec/backend.h"
#include "report/progress.h"
#include "viz/model.h"

namespace netspec::viz {

// ids evaluation, distance-maps; `shown` chains drawn (0-25 Å, dark = close).
std::string fold_report_sections(const Model& m, const data::Dataset& test, const std::string& what,
                                 exec::Backend& be, int shown, double& seconds,
                                 const report::EvalLog& log = {});

}  // namespace netspec::viz
