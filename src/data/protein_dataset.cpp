// Protein backbones (protein.h): generated sequences with known structures, or a folder of PDB /
// mmCIF files; residue ids i32 [N, L] with true frames and a mask f32 [N, L, 13] (the fold task).
#include "data/dataset_registry.h"
#include "data/protein.h"

namespace netspec::data {

NETSPEC_REGISTER_DATASET(protein, .flag = "protein", .listed_at = 160, .load = load_protein_dataset,
                         .channels = 0, .norm = std::nullopt, .augment = std::nullopt,
                         .no_augment = "residue sequences cannot be cropped or flipped",
                         .classes_from = "the 20 amino acids and X (AlphaFold 2's restype order)",
                         .sequence_input = true)

}  // namespace netspec::data
