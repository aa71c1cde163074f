// Protein backbones (data/protein.h): PDB and mmCIF files written here from a generated chain
// read back to its atoms (3-decimal coordinates), the first model and first alternate location
// only, errors naming file:line (short record, bad number, residue without C, a ragged mmCIF
// row), windows and padding of fold_samples, and load_dataset(protein) from a folder.
#include "data/protein.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "data/data_test_util.h"

namespace netspec::data {
namespace {

using test::error_of;
using test::tmpdir;

const char* kNames[20] = {"ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU", "GLY", "HIS", "ILE",
                          "LEU", "LYS", "MET", "PHE", "PRO", "SER", "THR", "TRP", "TYR", "VAL"};
const char* kAtoms[3] = {"N", "CA", "C"};

// PDB ATOM records of c (chain A, residues from 1) plus an O atom per residue.
std::string pdb_of(const Chain& c) {
  std::string s = "HEADER    TEST\n";
  int serial = 1;
  for (size_t i = 0; i < c.aa.size(); ++i) {
    for (int k = 0; k < 4; ++k) {
      const double* x = c.xyz[i].data() + 3 * (k == 3 ? 2 : k);
      s += fmt::format("ATOM  {:5d}  {:<3s} {:3s} A{:4d}    {:8.3f}{:8.3f}{:8.3f}  1.00  0.00\n",
                       serial++, k == 3 ? "O" : kAtoms[k], kNames[c.aa[i]], int(i + 1), x[0],
                       x[1] + (k == 3 ? 1.2 : 0), x[2]);
    }
  }
  return s + "END\n";
}

std::string cif_of(const Chain& c) {
  std::string s =
      "data_test\n#\nloop_\n_atom_site.group_PDB\n_atom_site.id\n_atom_site.label_atom_id\n"
      "_atom_site.label_alt_id\n_atom_site.label_comp_id\n_atom_site.auth_asym_id\n"
      "_atom_site.auth_seq_id\n_atom_site.pdbx_PDB_ins_code\n_atom_site.Cartn_x\n"
      "_atom_site.Cartn_y\n_atom_site.Cartn_z\n_atom_site.pdbx_PDB_model_num\n";
  int serial = 1;
  for (int model : {1, 2})
    for (size_t i = 0; i < c.aa.size(); ++i)
      for (int k = 0; k < 3; ++k) {
        const double* x = c.xyz[i].data() + 3 * k;
        s += fmt::format("ATOM {} {} . {} B {} ? {:.3f} {:.3f} {:.3f} {}\n", serial++, kAtoms[k],
                         kNames[c.aa[i]], i + 1, x[0] + (model - 1) * 50, x[1], x[2], model);
      }
  return s + "#\n";
}

void expect_same(const Chain& got, const Chain& want) {
  ASSERT_EQ(got.aa, want.aa);
  for (size_t i = 0; i < want.xyz.size(); ++i)
    for (int k = 0; k < 9; ++k) EXPECT_NEAR(got.xyz[i][size_t(k)], want.xyz[i][size_t(k)], 5e-4);
}

TEST(Protein, PdbAndMmcifReadBackTheirAtoms) {
  const Chain c = generate_chains(1, 12, 3)[0];
  const std::string d = tmpdir("protein_rw");
  std::string two = pdb_of(c);  // as model 1 of 2: model 2 is not read
  two.insert(two.find("ATOM"), "MODEL        1\n");
  two.insert(two.find("END\n"),
             "ENDMDL\nMODEL        2\n"
             "ATOM      1  N   GLY B   1       1.000   1.000   1.000\nENDMDL\n");
  std::ofstream(d + "/x.pdb") << two;
  std::ofstream(d + "/x.cif") << cif_of(c);
  const std::vector<Chain> p = read_structure_file(d + "/x.pdb");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].where, d + "/x.pdb chain A");
  expect_same(p[0], c);
  const std::vector<Chain> m = read_structure_file(d + "/x.cif");
  ASSERT_EQ(m.size(), 1u);  // model 2 is not read
  expect_same(m[0], c);
  EXPECT_EQ(restype_of("MSE"), 12);
  EXPECT_EQ(restype_of("UNK"), kUnknownRestype);
}

TEST(Protein, AlternateLocationsKeepTheFirst) {
  const std::string d = tmpdir("protein_alt");
  std::ofstream(d + "/a.pdb")
      << "ATOM      1  N   SER A   5       1.000   0.000   0.000  1.00  0.00\n"
         "ATOM      2  CA ASER A   5       2.000   0.000   0.000  0.50  0.00\n"
         "ATOM      3  CA BSER A   5       9.000   0.000   0.000  0.50  0.00\n"
         "ATOM      4  C   SER A   5       3.000   1.000   0.000  1.00  0.00\n";
  const std::vector<Chain> c = read_structure_file(d + "/a.pdb");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].aa, std::vector<int32_t>{15});
  EXPECT_EQ(c[0].xyz[0][3], 2.0);
}

TEST(Protein, MalformedFilesAreNamedWithTheirLine) {
  const std::string d = tmpdir("protein_bad");
  std::ofstream(d + "/short.pdb") << "REMARK x\nATOM      1  N   ALA A   1       1.000   0.000\n";
  EXPECT_NE(error_of([&] {
              read_structure_file(d + "/short.pdb");
            }).find("short.pdb:2: ATOM record has 46 columns (x, y, z need 54)"),
            std::string::npos)
      << error_of([&] { read_structure_file(d + "/short.pdb"); });
  std::ofstream(d + "/nan.pdb") << "ATOM      1  N   ALA A   1       1.000   abcde   0.000\n";
  EXPECT_NE(error_of([&] {
              read_structure_file(d + "/nan.pdb");
            }).find("nan.pdb:1: y 'abcde' is not a number"),
            std::string::npos);
  std::ofstream(d + "/noc.pdb") << "ATOM      1  N   ALA A   1       1.000   0.000   0.000\n"
                                   "ATOM      2  CA  ALA A   1       2.000   0.000   0.000\n"
                                   "ATOM      3  N   GLY A   2       4.000   0.000   0.000\n";
  EXPECT_NE(error_of([&] {
              read_structure_file(d + "/noc.pdb");
            }).find("noc.pdb:1: residue ALA 1 of chain A has no C atom"),
            std::string::npos)
      << error_of([&] { read_structure_file(d + "/noc.pdb"); });
  std::ofstream(d + "/empty.pdb") << "HEADER    NOTHING\n";
  EXPECT_NE(error_of([&] {
              read_structure_file(d + "/empty.pdb");
            }).find("empty.pdb: no residue with N, CA and C atoms"),
            std::string::npos);
  std::string cif = cif_of(generate_chains(1, 2, 1)[0]);
  cif.insert(cif.find("ATOM 3 "), "ATOM 99 N\n");  // a ragged row on line 18
  std::ofstream(d + "/r.cif") << cif;
  EXPECT_NE(error_of([&] {
              read_structure_file(d + "/r.cif");
            }).find("r.cif:18: an _atom_site row has 3 values (expected 12, one atom per line)"),
            std::string::npos)
      << error_of([&] { read_structure_file(d + "/r.cif"); });
}

TEST(Protein, SamplesAreWindowsOfTheNetsLengthWithPadding) {
  std::vector<Chain> cs = generate_chains(2, 10, 9);
  cs[1].aa.resize(4);
  cs[1].xyz.resize(4);
  const Dataset ds = fold_samples(cs, 6);  // chain 0: windows at 0 and 4; chain 1: padded
  ASSERT_EQ(ds.x.shape(), (Shape{3, 6}));
  ASSERT_EQ(ds.y.shape(), (Shape{3, 6, 13}));
  EXPECT_EQ(ds.x.data<int32_t>()[6], cs[0].aa[4]);  // window 2 starts at residue 4
  EXPECT_FLOAT_EQ(ds.y.data<float>()[(6 + 0) * 13 + 9], float(cs[0].xyz[4][3]));
  EXPECT_EQ(ds.x.data<int32_t>()[12 + 4], kUnknownRestype);
  EXPECT_EQ(ds.y.data<float>()[(12 + 3) * 13 + 12], 1.0f);
  EXPECT_EQ(ds.y.data<float>()[(12 + 4) * 13 + 12], 0.0f);
}

TEST(Protein, LoadsGeneratedChainsAndAFolderThroughItsDescriptor) {
  LoadOptions o;
  o.seq_len = 8;
  o.limit = 30;
  Splits g = load_dataset(DatasetKind::protein, o);
  EXPECT_EQ(g.train.x.shape(), (Shape{30, 8}));
  EXPECT_EQ(g.test.x.shape(), (Shape{100, 8}));
  EXPECT_EQ(g.class_names.size(), 21u);
  const std::string d = tmpdir("protein_dir");
  for (int i = 0; i < 10; ++i)
    std::ofstream(d + fmt::format("/f{}.pdb", i)) << pdb_of(generate_chains(1, 8, uint64_t(i))[0]);
  o.dir = d;
  o.limit = 0;
  Splits f = load_dataset(DatasetKind::protein, o);
  EXPECT_EQ(f.train.size(), 9);  // every 10th file (f9) holds validation
  EXPECT_EQ(f.test.size(), 1);
  EXPECT_EQ(f.test.x.data<int32_t>()[0], generate_chains(1, 8, 9)[0].aa[0]);
  o.seq_len = 0;
  EXPECT_NE(error_of([&] {
              load_dataset(DatasetKind::protein, o);
            }).find("the net must read a residue sequence"),
            std::string::npos);
}

}  // namespace
}  // namespace netspec::data
