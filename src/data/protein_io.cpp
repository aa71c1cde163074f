// PDB and mmCIF readers for the fold task (protein.h): the N, CA, C atoms of each residue of the
// first model, chain by chain. PDB: ATOM records (and HETATM MSE) in the fixed columns of the
// PDB format 3.3 (atom name 13-16, altLoc 17, residue 18-20, chain 22, number 23-26, insertion
// code 27, x y z 31-54). mmCIF: the _atom_site loop, one atom per line. The first alternate
// location (' ', 'A' or '1') is kept. A residue with none of N, CA, C (a nucleotide) is skipped;
// one with only some of them fails naming file:line, as does any malformed record.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>

#include "core/error.h"
#include "data/protein.h"

namespace netspec::data {
namespace {

struct Atom {
  int64_t line = 0;
  std::string name, res, chain, residue;  // residue: number + insertion code
  double x = 0, y = 0, z = 0;
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

double number(const std::string& path, int64_t line, const std::string& field,
              const std::string& text) {
  const std::string t = trim(text);
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v))
    fail("protein", "{}:{}: {} '{}' is not a number", path, line, field, t);
  return v;
}

bool first_alt(const std::string& alt) {
  return alt.empty() || alt == "A" || alt == "1" || alt == ".";
}

// Atoms (in file order) -> chains of residues with N, CA and C.
std::vector<Chain> to_chains(const std::string& path, const std::vector<Atom>& atoms) {
  std::vector<Chain> out;
  size_t i = 0;
  while (i < atoms.size()) {
    const Atom& a0 = atoms[i];
    size_t j = i;
    std::optional<std::array<double, 3>> got[3];
    for (; j < atoms.size() && atoms[j].chain == a0.chain && atoms[j].residue == a0.residue; ++j) {
      const Atom& a = atoms[j];
      const int k = a.name == "N" ? 0 : a.name == "CA" ? 1 : a.name == "C" ? 2 : -1;
      if (k >= 0 && !got[k]) got[k] = std::array<double, 3>{a.x, a.y, a.z};
    }
    const int have = int(got[0].has_value()) + int(got[1].has_value()) + int(got[2].has_value());
    if (have > 0 && have < 3) {
      const char* missing = !got[0] ? "N" : !got[1] ? "CA" : "C";
      fail("protein",
           "{}:{}: residue {} {} of chain {} has no {} atom (N, CA and C give its frame)", path,
           a0.line, a0.res, a0.residue, a0.chain, missing);
    }
    if (have == 3) {
      if (out.empty() || out.back().where != path + " chain " + a0.chain)
        out.push_back(Chain{path + " chain " + a0.chain, {}, {}});
      out.back().aa.push_back(restype_of(a0.res));
      std::array<double, 9> x{};
      for (int k = 0; k < 3; ++k)
        for (int c = 0; c < 3; ++c) x[size_t(3 * k + c)] = (*got[k])[size_t(c)];
      out.back().xyz.push_back(x);
    }
    i = j;
  }
  if (out.empty()) fail("protein", "{}: no residue with N, CA and C atoms", path);
  return out;
}

std::vector<Atom> read_pdb(const std::string& path, std::istream& in) {
  std::vector<Atom> atoms;
  std::string s;
  for (int64_t line = 1; std::getline(in, s); ++line) {
    const std::string rec = s.substr(0, 6);
    if (rec == "ENDMDL" || trim(s) == "END") break;  // the first model only
    const bool atom = rec == "ATOM  ";
    if (!atom && !(rec == "HETATM" && s.size() >= 20 && s.substr(17, 3) == "MSE")) continue;
    if (s.size() < 54)
      fail("protein", "{}:{}: {} record has {} columns (x, y, z need 54)", path, line, trim(rec),
           s.size());
    if (!first_alt(trim(s.substr(16, 1)))) continue;
    Atom a;
    a.line = line;
    a.name = trim(s.substr(12, 4));
    a.res = trim(s.substr(17, 3));
    a.chain = trim(s.substr(21, 1));
    a.residue = trim(s.substr(22, 5));
    number(path, line, "residue number", s.substr(22, 4));
    a.x = number(path, line, "x", s.substr(30, 8));
    a.y = number(path, line, "y", s.substr(38, 8));
    a.z = number(path, line, "z", s.substr(46, 8));
    atoms.push_back(std::move(a));
  }
  return atoms;
}

// Whitespace-separated CIF values, '...' and "..." quoted.
std::vector<std::string> cif_tokens(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    if (s[i] == '\'' || s[i] == '"') {
      const char q = s[i];
      size_t e = i + 1;
      while (e < s.size() && !(s[e] == q && (e + 1 == s.size() ||
                                             std::isspace(static_cast<unsigned char>(s[e + 1])))))
        ++e;
      out.push_back(s.substr(i + 1, e - i - 1));
      i = e + 1;
    } else {
      size_t e = i;
      while (e < s.size() && !std::isspace(static_cast<unsigned char>(s[e]))) ++e;
      out.push_back(s.substr(i, e - i));
      i = e;
    }
  }
  return out;
}

std::vector<Atom> read_mmcif(const std::string& path, std::istream& in) {
  std::vector<Atom> atoms;
  std::vector<std::string> cols;
  int64_t loop_line = 0;
  bool in_loop = false, rows = false;
  std::string s, first_model;
  auto col = [&](const char* a, const char* b) -> int {
    for (const char* name : {a, b}) {
      if (!name) continue;
      auto it = std::find(cols.begin(), cols.end(), name);
      if (it != cols.end()) return int(it - cols.begin());
    }
    return -1;
  };
  int c_group = -1, c_atom = -1, c_alt = -1, c_res = -1, c_chain = -1, c_seq = -1, c_ins = -1,
      c_x = -1, c_y = -1, c_z = -1, c_model = -1;
  for (int64_t line = 1; std::getline(in, s); ++line) {
    const std::string t = trim(s);
    if (t == "loop_") {
      if (rows) break;  // the _atom_site loop ended
      in_loop = true, cols.clear(), loop_line = line;
      continue;
    }
    if (in_loop && !rows && t.rfind("_atom_site.", 0) == 0) {
      cols.push_back(t.substr(11));
      continue;
    }
    if (cols.empty() || t.empty()) continue;
    if (t[0] == '_' || t[0] == '#' || t.rfind("data_", 0) == 0) {
      if (rows) break;
      in_loop = false, cols.clear();
      continue;
    }
    if (!rows) {
      rows = true;
      c_group = col("group_PDB", nullptr), c_atom = col("label_atom_id", "auth_atom_id");
      c_alt = col("label_alt_id", nullptr), c_res = col("label_comp_id", "auth_comp_id");
      c_chain = col("auth_asym_id", "label_asym_id"), c_seq = col("auth_seq_id", "label_seq_id");
      c_ins = col("pdbx_PDB_ins_code", nullptr), c_model = col("pdbx_PDB_model_num", nullptr);
      c_x = col("Cartn_x", nullptr), c_y = col("Cartn_y", nullptr), c_z = col("Cartn_z", nullptr);
      for (auto [c, name] : {std::pair{c_atom, "label_atom_id"},
                             {c_res, "label_comp_id"},
                             {c_chain, "auth_asym_id"},
                             {c_seq, "auth_seq_id"},
                             {c_x, "Cartn_x"},
                             {c_y, "Cartn_y"},
                             {c_z, "Cartn_z"}})
        if (c < 0)
          fail("protein", "{}:{}: the _atom_site loop has no {} column", path, loop_line, name);
    }
    const std::vector<std::string> v = cif_tokens(t);
    if (v.size() != cols.size())
      fail("protein", "{}:{}: an _atom_site row has {} values (expected {}, one atom per line)",
           path, line, v.size(), cols.size());
    if (c_model >= 0) {
      if (first_model.empty()) first_model = v[size_t(c_model)];
      if (v[size_t(c_model)] != first_model) break;
    }
    const std::string group = c_group >= 0 ? v[size_t(c_group)] : "ATOM";
    const std::string res = v[size_t(c_res)];
    if (group != "ATOM" && !(group == "HETATM" && res == "MSE")) continue;
    if (c_alt >= 0 && !first_alt(v[size_t(c_alt)] == "?" ? "" : v[size_t(c_alt)])) continue;
    Atom a;
    a.line = line, a.name = v[size_t(c_atom)], a.res = res, a.chain = v[size_t(c_chain)];
    a.residue = v[size_t(c_seq)] + (c_ins >= 0 && v[size_t(c_ins)] != "?" ? v[size_t(c_ins)] : "");
    a.x = number(path, line, "Cartn_x", v[size_t(c_x)]);
    a.y = number(path, line, "Cartn_y", v[size_t(c_y)]);
    a.z = number(path, line, "Cartn_z", v[size_t(c_z)]);
    atoms.push_back(std::move(a));
  }
  return atoms;
}

}  // namespace

std::vector<Chain> read_structure_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("protein", "{}: cannot open", path);
  std::string e = path.substr(path.find_last_of('.') + 1);
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char ch) { return std::tolower(ch); });
  const bool cif = e == "cif" || e == "mmcif";
  return to_chains(path, cif ? read_mmcif(path, in) : read_pdb(path, in));
}

}  // namespace netspec::data
