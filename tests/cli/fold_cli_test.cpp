// `netspec train` of a protein-fold net on generated chains (dataset protein, lossKind af2Fold):
// the epoch line, metrics.csv, best.json, `eval` and the report page carry AlphaFold 2's metrics,
// and after a short run lDDT-Cα is higher and FAPE lower than the untrained net's, computed here
// from the eval module on the same validation chains. A folder of PDB files whose residue lacks its
// C atom exits 2 naming file:line.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli_util.h"
#include "data/protein.h"
#include "exec/backend.h"
#include "layers/param_table.h"
#include "spec/spec_json.h"
#include "tasks/fold/fold_metrics.h"
#include "train/evaluate.h"
#include "train/trainer.h"

namespace netspec::cli_test {
namespace {

constexpr const char* kTinyFold = R"({"name": "fold-cli", "inputChannels": 16,
  "inputHeight": 0, "inputWidth": 0, "layers": [
    {"kind": "tokenPositionEmbed", "vocab": 21, "seqLen": 16, "dModel": 16, "posEmb": false},
    {"kind": "pairTile", "L": 16, "D": 16, "C": 8, "pairPlanes": 16},
    {"kind": "evoformerBlock", "msaCh": 16, "pairCh": 8, "nBlocks": 1},
    {"kind": "structureModule", "singleCh": 16, "pairCh": 8, "nBlocks": 2, "frames": true,
     "distogramBins": 16}],
  "train": {"dataset": "protein", "optimizer": "adam", "learningRate": 0.002, "batchSize": 8,
    "epochs": 4, "lossKind": "af2Fold"}})";

// Mean lDDT-Cα and FAPE of the untrained net (the trainer's init, seed 0) over the validation
// chains.
std::pair<double, double> untrained_scores(const SpecFile& s) {
  const ParamTable table = build_param_table(s.net);
  const TrainConfig c = *s.train;
  auto be = exec::make_backend("cpu");
  train::Evaluator ev(s.net, c.batchSize, *be, &table);
  const std::vector<Tensor> params = train::init_params(table, c.init, 0);
  data::LoadOptions lo;
  lo.seq_len = 16;
  const data::Dataset test = data::load_protein_dataset(lo).test;
  double lddt = 0, fape = 0;
  const int64_t n = test.size(), l = 16, f = table.output.at(1), b = c.batchSize;
  for (int64_t first = 0; first < n; first += b) {
    Tensor x(DType::kI32, {b, l});
    for (int64_t i = 0; i < b * l; ++i)
      x.data<int32_t>()[i] = first * l + i < n * l ? test.x.data<int32_t>()[first * l + i] : 20;
    const Tensor out = ev.logits(params, {}, x);
    for (int64_t i = 0; i < b && first + i < n; ++i) {
      std::vector<tasks::fold::Frame> p(static_cast<size_t>(l)), t(static_cast<size_t>(l));
      std::vector<double> mask(static_cast<size_t>(l));
      for (int64_t r = 0; r < l; ++r) {
        for (int k = 0; k < 12; ++k) {
          p[size_t(r)][size_t(k)] = out.data<float>()[(i * l + r) * f + k];
          t[size_t(r)][size_t(k)] = test.y.data<float>()[((first + i) * l + r) * 13 + k];
        }
        mask[size_t(r)] = test.y.data<float>()[((first + i) * l + r) * 13 + 12];
      }
      lddt += tasks::fold::lddt_ca(p, t, mask) / double(n);
      fape += tasks::fold::fape(p, t, mask) / double(n);
    }
  }
  return {lddt, fape};
}

TEST(FoldCli, TrainImprovesLddtAndFapeOverTheUntrainedNet) {
  auto dir = temp_dir("fold_cli_", "train");
  std::ofstream(dir / "fold.json") << kTinyFold;
  Result r = sh("train " + (dir / "fold.json").string() + " --limit 400 --run-dir " +
                (dir / "run").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("fold: 400 training / 100 validation chains of 16 residues"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("lDDT-Cα"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("test lDDT-Cα"), std::string::npos) << r.out;
  const std::string header = slurp(dir / "run" / "metrics.csv");
  EXPECT_NE(header.find("val_fape,val_lddt_ca,val_dist_ce"), std::string::npos) << header;
  const auto best = nlohmann::json::parse(slurp(dir / "run" / "best.json"));
  const double lddt = best.at("val_lddt_ca"), fape = best.at("val_fape");
  const double ce = best.at("val_dist_ce");
  EXPECT_EQ(best.at("val_count"), 100);
  EXPECT_EQ(best.at("val_score"), lddt);
  const auto [lddt0, fape0] = untrained_scores(parse_spec(kTinyFold));
  std::cout << "untrained lDDT-Cα " << lddt0 << " FAPE " << fape0 << " Å; trained lDDT-Cα " << lddt
            << " FAPE " << fape << " Å, distogram CE " << ce << "\n";
  EXPECT_GT(lddt, lddt0 + 10);
  EXPECT_LT(fape, fape0 - 0.5);
  EXPECT_LT(ce, std::log(16.0) - 0.3);  // below the uniform distogram's
  // eval and the report page score the best checkpoint as validation did
  r = sh("eval " + (dir / "run").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(fmt::format("lDDT-Cα {:.2f}", lddt)), std::string::npos) << r.out;
  r = sh("report " + (dir / "run").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("evaluating [0-9]+ chains \\.\\.\\.\n")))
      << r.out;  // the evaluation's progress lines
  EXPECT_TRUE(std::regex_search(r.out, std::regex("evaluated [0-9]+ chains in [0-9.]+ s\n")))
      << r.out;
  const std::string page = slurp(dir / "run" / "report.html");
  EXPECT_NE(page.find(fmt::format("lDDT-Cα <b>{:.2f}</b>, FAPE <b>{:.3f} Å</b>", lddt, fape)),
            std::string::npos);
  EXPECT_NE(page.find("<h2 id=\"distance-maps\">"), std::string::npos);
  EXPECT_NE(page.find("<th>val lDDT-Cα</th>"), std::string::npos);
}

TEST(FoldCli, ABadPdbFolderExitsTwoNamingFileAndLine) {
  auto dir = temp_dir("fold_cli_", "pdb");
  std::filesystem::create_directories(dir / "pdb");
  std::ofstream(dir / "pdb" / "a.pdb")
      << "ATOM      1  N   ALA A   1      11.104   6.134  -6.504  1.00  0.00           N\n"
         "ATOM      2  CA  ALA A   1      11.639   6.071  -5.147  1.00  0.00           C\n"
         "END\n";
  std::ofstream(dir / "fold.json") << kTinyFold;
  Result r = sh("train " + (dir / "fold.json").string() + " --data " + (dir / "pdb").string() +
                " --run-dir " + (dir / "run").string());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("a.pdb:1: residue ALA 1 of chain A has no C atom"), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace netspec::cli_test
