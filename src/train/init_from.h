// Starting a run from weights (fine-tuning): parameters and BN running statistics are loaded by
// netspec name from a safetensors file (a checkpoint, or `netspec convert` output); a PyTorch file
// (torch.save zip, or safetensors with none of the net's names) is converted on the way, as
// `netspec convert` does, with the head free to differ. A tensor of
// the head (the last parameterized layer) whose shape differs or that the file lacks keeps its
// fresh init (a head re-initialised for --classes); any other missing or mis-shaped tensor fails
// naming it. bootstrapBackbone/bootstrapRanges load only the listed layer indices ("0-8,10").
#pragma once
#include <iosfwd>
#include <string>

#include "spec/param_table.h"
#include "spec/train_config.h"
#include "train/checkpoint.h"

namespace netspec::train {

// ranges: "" (every layer), comma-separated indices and a-b ranges of layers to load, or
// "floats:N": the first layers whose parameters (table order) are exactly N floats.
void load_init_weights(const std::string& path, const ParamTable& t, TrainState& s,
                       const std::string& ranges, std::ostream* log);
// Fails when a TrainConfig::freeze prefix names no parameter (listing a few names).
void check_freeze(const TrainConfig& c, const ParamTable& t);

}  // namespace netspec::train
