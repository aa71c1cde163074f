// Golden MLIR: the train_step modules of linear, mlp and mnist-cnn (batch 8, 10 classes, each
// spec's default training settings) emitted in-process must equal tests/golden/*.mlir and their
// manifests byte for byte. A deliberate change is accepted by running scripts/regen-golden.sh
// and reviewing the diff.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "emit/emit.h"
#include "hlo/text/printer.h"
#include "spec/param_table.h"
#include "spec/zoo.h"

namespace netspec::emit {
namespace {

constexpr int64_t kBatch = 8;
constexpr int kClasses = 10;

std::string read_golden(const std::string& file) {
  std::string path = std::string(NETSPEC_SOURCE_DIR) + "/tests/golden/" + file;
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "missing " << path;
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Mirrors `netspec emit NET --module train_step --batch 8 --classes 10` (src/cli/cmd_emit.cpp).
Emitted emit_like_cli(const std::string& name) {
  SpecFile spec = resolve_net(name);
  set_num_classes(spec.net, kClasses);
  TrainConfig tc = spec.train.value_or(TrainConfig{});
  return emit_module(spec.net, ModuleKind::train_step, EmitOptions::from_train(tc, kBatch));
}

// The first differing line, for a readable failure.
std::string first_diff(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
    if (ea && eb) return "(texts differ only in the final newline)";
    if (ea || eb || la != lb)
      return "first difference at line " + std::to_string(line) + ":\n  golden:  " +
             (ea ? "<end>" : la) + "\n  emitted: " + (eb ? "<end>" : lb);
  }
}

constexpr const char* kHowToFix =
    "\nIf the change is intended, run `scripts/regen-golden.sh BUILD_DIR` and review "
    "`git diff tests/golden` before committing it.";

TEST(EmitGolden, TrainStepTextAndManifestMatchGoldenFiles) {
  for (const char* name : {"linear", "mlp", "mnist-cnn"}) {
    SCOPED_TRACE(name);
    Emitted e = emit_like_cli(name);
    std::string base = std::string(name) + ".train_step";
    std::string text = hlo::print_module(*e.module);
    std::string want = read_golden(base + ".mlir");
    EXPECT_TRUE(text == want) << "tests/golden/" << base << ".mlir is out of date; "
                              << first_diff(want, text) << kHowToFix;
    std::string json = e.manifest.to_json();
    std::string want_json = read_golden(base + ".manifest.json");
    EXPECT_TRUE(json == want_json) << "tests/golden/" << base << ".manifest.json is out of date; "
                                   << first_diff(want_json, json) << kHowToFix;
  }
}

// The golden files stay small enough to review in a diff.
TEST(EmitGolden, FilesStaySmall) {
  for (const char* name : {"linear", "mlp", "mnist-cnn"}) {
    std::string text = read_golden(std::string(name) + ".train_step.mlir");
    EXPECT_GT(text.size(), 100u) << name;
    EXPECT_LT(text.size(), 300u * 1024) << name;
  }
}

}  // namespace
}  // namespace netspec::emit
