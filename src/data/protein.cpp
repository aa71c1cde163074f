// Generated backbones, frames and the fold task's samples (protein.h). Atoms are placed by the
// natural extension reference frame: D from A, B, C with |CD| = l, ∠BCD = θ, torsion ABCD = φ.
#include "data/protein.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>
#include <random>

#include "core/error.h"
#include "data/dir_list.h"

namespace netspec::data {
namespace {

using V3 = std::array<double, 3>;
V3 sub(const V3& a, const V3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
V3 cross(const V3& a, const V3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const V3& a, const V3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
V3 unit(const V3& a) {
  const double n = std::sqrt(dot(a, a));
  return {a[0] / n, a[1] / n, a[2] / n};
}
double rad(double deg) { return deg * std::numbers::pi / 180; }

// NeRF: D = C + l·(-cos θ·bc + sin θ cos φ·(n × bc) + sin θ sin φ·n), bc = unit(C - B),
// n = unit((B - A) × bc).
V3 place(const V3& a, const V3& b, const V3& c, double l, double theta_deg, double phi_deg) {
  const V3 bc = unit(sub(c, b));
  const V3 n = unit(cross(sub(b, a), bc));
  const V3 m = cross(n, bc);
  const double th = rad(theta_deg), ph = rad(phi_deg);
  const double x = -l * std::cos(th), y = l * std::sin(th) * std::cos(ph),
               z = l * std::sin(th) * std::sin(ph);
  return {c[0] + x * bc[0] + y * m[0] + z * n[0], c[1] + x * bc[1] + y * m[1] + z * n[1],
          c[2] + x * bc[2] + y * m[2] + z * n[2]};
}

// Per restype (ARNDCQEGHILKMFPSTWYV) its backbone dihedrals (φ, ψ) in degrees and its segment
// class: 0 helix (A R Q E L K M: right-handed α), 1 strand (I F T W Y V: β), 2 loop (N D C G H
// P S: each its own turn or polyproline conformation).
struct Restype {
  double phi, psi;
  int cls;
};
constexpr Restype kTypes[20] = {
    {-60, -45, 0}, {-63, -42, 0},  {-90, 0, 2},    {-75, 160, 2},  {-100, 20, 2},
    {-61, -43, 0}, {-57, -47, 0},  {80, 10, 2},    {-70, -20, 2},  {-115, 125, 1},
    {-62, -41, 0}, {-64, -40, 0},  {-58, -45, 0},  {-118, 128, 1}, {-65, 145, 2},
    {-80, 80, 2},  {-110, 120, 1}, {-130, 140, 1}, {-125, 135, 1}, {-120, 130, 1},
};

// Deterministic across platforms: mt19937_64 bits, uniform [0, 1) from 53 of them, Box-Muller.
struct Draw {
  std::mt19937_64 g;
  double uniform() { return double(g() >> 11) * 0x1.0p-53; }
  int64_t below(int64_t n) { return static_cast<int64_t>(uniform() * double(n)); }
  double normal() {
    const double u = 1 - uniform(), v = uniform();
    return std::sqrt(-2 * std::log(u)) * std::cos(2 * std::numbers::pi * v);
  }
};

}  // namespace

int32_t restype_of(const std::string& name) {
  static const char* kNames[20] = {"ALA", "ARG", "ASN", "ASP", "CYS", "GLN", "GLU",
                                   "GLY", "HIS", "ILE", "LEU", "LYS", "MET", "PHE",
                                   "PRO", "SER", "THR", "TRP", "TYR", "VAL"};
  if (name == "MSE") return 12;  // selenomethionine reads as MET (as AF2)
  for (int32_t i = 0; i < 20; ++i)
    if (name == kNames[i]) return i;
  return kUnknownRestype;
}

std::vector<Chain> generate_chains(int64_t count, int64_t length, uint64_t seed) {
  std::vector<int32_t> by_cls[3];
  for (int32_t i = 0; i < 20; ++i) by_cls[kTypes[i].cls].push_back(i);
  std::vector<Chain> out;
  Draw d{std::mt19937_64(seed)};
  for (int64_t c = 0; c < count; ++c) {
    Chain ch;
    ch.where = fmt::format("generated chain {}", c);
    // Segments: helix 6-14, strand 4-8, loop 2-5 residues; a loop between any two others.
    int cls = d.below(2) == 0 ? 0 : 1;
    while (static_cast<int64_t>(ch.aa.size()) < length) {
      const int64_t len = cls == 0 ? 6 + d.below(9) : cls == 1 ? 4 + d.below(5) : 2 + d.below(4);
      const std::vector<int32_t>& pool = by_cls[cls];
      for (int64_t i = 0; i < len && static_cast<int64_t>(ch.aa.size()) < length; ++i)
        ch.aa.push_back(pool[size_t(d.below(int64_t(pool.size())))]);
      cls = cls == 2 ? static_cast<int>(d.below(2)) : 2;
    }
    // N_0 at the origin, CA_0 on x, C_0 in the xy plane; then ψ_i, ω = 180°, φ_{i+1}.
    // (φ_0 has no preceding C: it does not shape the chain.)
    V3 n{0, 0, 0}, ca{kBondNCa, 0, 0};
    const double a = rad(180 - kAngleNCaC);
    V3 cc{ca[0] + kBondCaC * std::cos(a), kBondCaC * std::sin(a), 0};
    for (int64_t i = 0; i < length; ++i) {
      ch.xyz.push_back({n[0], n[1], n[2], ca[0], ca[1], ca[2], cc[0], cc[1], cc[2]});
      if (i + 1 == length) break;
      const double psi = kTypes[ch.aa[size_t(i)]].psi + 4 * d.normal();
      const double phi = kTypes[ch.aa[size_t(i + 1)]].phi + 4 * d.normal();
      const V3 n1 = place(n, ca, cc, kBondCN, kAngleCaCN, psi);
      const V3 ca1 = place(ca, cc, n1, kBondNCa, kAngleCNCa, 180);
      const V3 c1 = place(cc, n1, ca1, kBondCaC, kAngleNCaC, phi);
      n = n1, ca = ca1, cc = c1;
    }
    V3 mean{0, 0, 0};
    for (const auto& r : ch.xyz)
      for (int k = 0; k < 3; ++k) mean[size_t(k)] += r[size_t(3 + k)] / double(length);
    for (auto& r : ch.xyz)
      for (int k = 0; k < 9; ++k) r[size_t(k)] -= mean[size_t(k % 3)];
    out.push_back(std::move(ch));
  }
  return out;
}

std::array<double, 12> backbone_frame(const std::array<double, 9>& x) {
  const V3 n{x[0], x[1], x[2]}, ca{x[3], x[4], x[5]}, c{x[6], x[7], x[8]};
  const V3 e1 = unit(sub(c, ca));
  const V3 v2 = sub(n, ca);
  const double p = dot(e1, v2);
  const V3 e2 = unit({v2[0] - p * e1[0], v2[1] - p * e1[1], v2[2] - p * e1[2]});
  const V3 e3 = cross(e1, e2);
  std::array<double, 12> f{};
  for (int a = 0; a < 3; ++a) {  // row a: (e1[a], e2[a], e3[a])
    f[size_t(3 * a)] = e1[size_t(a)];
    f[size_t(3 * a + 1)] = e2[size_t(a)];
    f[size_t(3 * a + 2)] = e3[size_t(a)];
    f[size_t(9 + a)] = ca[size_t(a)];
  }
  return f;
}

Dataset fold_samples(const std::vector<Chain>& chains, int64_t length) {
  std::vector<std::pair<size_t, int64_t>> windows;  // (chain, first residue)
  for (size_t c = 0; c < chains.size(); ++c) {
    const int64_t n = static_cast<int64_t>(chains[c].aa.size());
    if (n <= length) {
      windows.emplace_back(c, 0);
      continue;
    }
    for (int64_t s = 0; s < n; s += length) windows.emplace_back(c, std::min(s, n - length));
  }
  const int64_t count = static_cast<int64_t>(windows.size());
  Tensor x(DType::kI32, {count, length});
  Tensor y(DType::kF32, {count, length, 13});
  std::fill_n(x.data<int32_t>(), x.numel(), kUnknownRestype);
  std::fill_n(y.data<float>(), y.numel(), 0.0f);
  for (int64_t w = 0; w < count; ++w) {
    const Chain& ch = chains[windows[size_t(w)].first];
    const int64_t from = windows[size_t(w)].second;
    const int64_t n = std::min<int64_t>(length, int64_t(ch.aa.size()) - from);
    for (int64_t i = 0; i < n; ++i) {
      x.data<int32_t>()[w * length + i] = ch.aa[size_t(from + i)];
      const std::array<double, 12> f = backbone_frame(ch.xyz[size_t(from + i)]);
      float* row = y.data<float>() + (w * length + i) * 13;
      for (int k = 0; k < 12; ++k) row[k] = static_cast<float>(f[size_t(k)]);
      row[12] = 1;
    }
  }
  return Dataset(std::move(x), std::move(y));
}

namespace {

bool structure_file(const std::filesystem::path& p) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return e == ".pdb" || e == ".ent" || e == ".cif" || e == ".mmcif";
}

std::vector<std::string> structure_files(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const DirEntry& e : list_dir("protein", dir))
    if (e.kind == EntryKind::kRegular && structure_file(e.path)) out.push_back(e.path.string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Chain> read_all(const std::vector<std::string>& files) {
  std::vector<Chain> out;
  for (const std::string& f : files)
    for (Chain& c : read_structure_file(f)) out.push_back(std::move(c));
  return out;
}

}  // namespace

Splits load_protein_dataset(const LoadOptions& o) {
  if (o.seq_len <= 0)
    fail("protein", "the net must read a residue sequence (an input of [L] residue ids; got {})",
         o.seq_len);
  const int64_t len = o.seq_len;
  Splits s;
  for (int32_t i = 0; i < 20; ++i) s.class_names.emplace_back(1, kRestypes[i]);
  s.class_names.emplace_back("X");
  if (o.dir.empty()) {
    s.train = fold_samples(generate_chains(o.limit > 0 ? o.limit : 1000, len, 4501), len);
    s.test = fold_samples(generate_chains(100, len, 4502), len);
    return s;
  }
  const std::filesystem::path dir(o.dir);
  if (entry_kind("protein", dir) != EntryKind::kDirectory)
    fail("protein", "{}: not a directory of .pdb/.cif files", o.dir);
  std::vector<std::string> train, val;
  if (entry_kind("protein", dir / "train") == EntryKind::kDirectory) {
    train = structure_files(dir / "train");
    if (entry_kind("protein", dir / "val") == EntryKind::kDirectory)
      val = structure_files(dir / "val");
  } else {
    const std::vector<std::string> all = structure_files(dir);
    for (size_t i = 0; i < all.size(); ++i) (i % 10 == 9 ? val : train).push_back(all[i]);
  }
  if (train.empty())
    fail("protein", "{}: no .pdb, .ent, .cif or .mmcif files (in it or in train/)", o.dir);
  s.train = fold_samples(read_all(train), len);
  if (!val.empty()) s.test = fold_samples(read_all(val), len);
  if (o.limit > 0) s.train = take_first(s.train, o.limit);
  return s;
}

}  // namespace netspec::data
