// Prior-bias head init (RetinaNet): detPriorPi sets every objectness bias of the detector head's
// pred conv (channel a·oc + 4) to -ln((1-π)/π), so the head starts at σ = π; headPriorBias sets
// the class biases to ln(prior_c) from the training labels' class frequencies: the classifier's
// last bias [K] for class-index labels, the pred conv's class channels (a·oc + 5 + c) for a
// detector with yoloAnchor rows. Applied to freshly initialised parameters.
#pragma once
#include <vector>

#include "core/tensor.h"
#include "data/dataset.h"
#include "spec/param_table.h"
#include "spec/train_config.h"

namespace netspec::train {

// Class frequencies of the training labels: i32 [N] class indices, or yoloAnchor rows f32
// [N, R, 6] (the class of each positive row); `classes` entries, each floored at 1e-6.
std::vector<double> class_priors(const data::Dataset& train, int64_t classes);
// Applies c.detPriorPi (nets with a detector head) and c.headPriorBias (priors from `train`) to
// params; returns a line saying what was set ("" when nothing was).
std::string apply_prior_bias(const NetSpec& net, const ParamTable& t, const TrainConfig& c,
                             const data::Dataset& train, std::vector<Tensor>& params);

}  // namespace netspec::train
