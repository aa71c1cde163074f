// Procedurally generated data sets written in a real data set's on-disk format, so tests and
// demos run offline and a real download works unchanged (`netspec data synth --task T --format
// F --n N -o DIR`). One function per task, each in its own file (synth_<task>.cpp); the CLI's
// table (src/cli/cmd_data.cpp) maps task names to them.
#pragma once
#include <cstdint>
#include <string>

namespace netspec::data {

struct SynthOptions {
  std::string format;  // the task's on-disk format (seg: pets | brats)
  int64_t n = 0;       // samples (seg/pets: images; seg/brats: volumes)
  std::string out;     // output directory (created)
  uint64_t seed = 0;
};

// Segmentation (synth_seg.cpp): pets = Oxford-IIIT Pets layout (textured blob "pets" on textured
// backgrounds, trimaps with a border band); brats = MSD Task01_BrainTumour layout (NIfTI-1).
void synth_seg(const SynthOptions& o);
// NeRF (synth_nerf.cpp): the procedural radiance field's n training and 4 held-out views,
// size x size, in the transforms.json layout (format "transforms").
void synth_nerf(const SynthOptions& o, int64_t size);

}  // namespace netspec::data
