// Protein backbones for the fold task: residues as AlphaFold 2's restype indices (20 amino acids
// in "ARNDCQEGHILKMFPSTWYV" order, 20 = unknown or padding) with their N, CA, C atoms in Å; a
// deterministic generator of sequences whose structure follows from them (each residue type has
// its own backbone dihedrals φ/ψ, placed with ideal bond geometry), readers of PDB and mmCIF
// files (ATOM records of N, CA, C; errors name file:line), and the fold task's samples: ids
// i32 [N, L] and per residue the true frame (Alg. 21 rigidFrom3Points: R row-major, t = CA) and
// a mask, f32 [N, L, 13].
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "data/datasets.h"

namespace netspec::data {

inline constexpr char kRestypes[] = "ARNDCQEGHILKMFPSTWYV";
inline constexpr int32_t kUnknownRestype = 20;  // 'X': unknown residue and padding
// Ideal backbone geometry (Engh & Huber): bond lengths in Å, bond angles in degrees.
inline constexpr double kBondNCa = 1.458, kBondCaC = 1.525, kBondCN = 1.329;
inline constexpr double kAngleNCaC = 111.2, kAngleCaCN = 116.2, kAngleCNCa = 121.7;

struct Chain {
  std::string where;                       // "file.pdb chain A" (for messages)
  std::vector<int32_t> aa;                 // restype index per residue
  std::vector<std::array<double, 9>> xyz;  // N, CA, C per residue
};

// The restype index of a three-letter residue name (MSE reads as MET), 20 when unknown.
int32_t restype_of(const std::string& res_name);

// `count` chains of `length` residues from `seed`: helix (7 types), strand (6) and loop (7)
// segments, each residue at its type's (φ, ψ) plus N(0, 4°) noise, ω = 180°; centred on the
// mean CA. The same arguments give the same chains on every machine.
std::vector<Chain> generate_chains(int64_t count, int64_t length, uint64_t seed);

// The protein chains of a PDB (ATOM records, first model) or mmCIF (_atom_site loop) file; a
// residue without N, CA or C, a malformed record or a file without residues fails naming
// file:line.
std::vector<Chain> read_structure_file(const std::string& path);

// AF2 rigidFrom3Points (Alg. 21) at CA: e1 = (C - CA)/|C - CA|, e2 the unit part of N - CA
// orthogonal to e1, e3 = e1 × e2; R = (e1 e2 e3) as columns, row-major, then t = CA: 12 values.
std::array<double, 12> backbone_frame(const std::array<double, 9>& n_ca_c);

// Samples of `length` residues: a chain longer than `length` gives its consecutive windows
// (stride `length`, the last one ending at the chain's end), a shorter one is padded with
// restype 20 and mask 0. x i32 [N, length], y f32 [N, length, 13].
Dataset fold_samples(const std::vector<Chain>& chains, int64_t length);

// The protein dataset: generated (dir empty: 1000 training and 100 validation chains of the
// net's length from fixed seeds) or a folder of .pdb/.ent/.cif/.mmcif files (DIR/train and
// DIR/val, or the files alone with every 10th, in name order, held out for validation).
Splits load_protein_dataset(const LoadOptions& o);

}  // namespace netspec::data
