// print(parse(text)) == text for the pretty and generic forms of a module that uses every op
// kind, and the two forms parse to the same module.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "parser_samples.h"

namespace netspec::hlo {
namespace {

TEST(Roundtrip, AllOpsModuleCoversEveryOpKind) {
  auto m = testing::all_ops_module();
  std::set<OpKind> kinds;
  for (const auto& f : m->funcs) walk(*f->body, [&](const Op& op) { kinds.insert(op.kind); });
  for (size_t i = 0; i < kNumOpKinds; ++i)
    EXPECT_TRUE(kinds.count(static_cast<OpKind>(i))) << "missing " << op_name(static_cast<OpKind>(i));
}

TEST(Roundtrip, PrettyFormIsAFixedPoint) {
  auto m = testing::all_ops_module();
  std::string text = print_module(*m);
  auto m2 = parse_module(text, "pretty.mlir");
  EXPECT_EQ(print_module(*m2), text);
}

TEST(Roundtrip, GenericFormIsAFixedPoint) {
  auto m = testing::all_ops_module();
  PrintOptions g{.generic = true};
  std::string text = print_module(*m, g);
  EXPECT_EQ(text.find("stablehlo.add %"), std::string::npos) << "generic form must not use custom syntax";
  auto m2 = parse_module(text, "generic.mlir");
  EXPECT_EQ(print_module(*m2, g), text);
  // Both forms describe the same module.
  EXPECT_EQ(print_module(*m2), print_module(*m));
}

TEST(Roundtrip, ParsedModuleKeepsAttributesAndConstants) {
  auto m = testing::all_ops_module();
  auto m2 = parse_module(print_module(*m));
  ASSERT_EQ(m2->funcs.size(), m->funcs.size());
  for (size_t fi = 0; fi < m->funcs.size(); ++fi) {
    std::vector<const Op*> a, b;
    walk(*m->funcs[fi]->body, [&](const Op& op) { a.push_back(&op); });
    walk(*m2->funcs[fi]->body, [&](const Op& op) { b.push_back(&op); });
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i]->kind, b[i]->kind) << i;
      EXPECT_TRUE(a[i]->attrs == b[i]->attrs) << "attributes differ on " << a[i]->name();
      EXPECT_EQ(a[i]->result_types(), b[i]->result_types()) << a[i]->name();
    }
  }
}

// IREE's own MLIR parser (iree-opt from the oracle venv) reads both of our forms, and what it
// prints back (pretty and generic) parses to the same module. Skips without the venv.
TEST(Roundtrip, IreeOptReadsAndWritesOurText) {
  std::string tool = std::string(NETSPEC_BINARY_DIR) + "/venv/bin/iree-opt";
  if (const char* t = std::getenv("NETSPEC_IREE_OPT")) tool = t;
  if (!std::filesystem::exists(tool)) GTEST_SKIP() << "no " << tool << " (run scripts/install-oracles.sh)";
  auto m = testing::all_ops_module();
  std::string pretty = print_module(*m);
  auto dir = std::filesystem::path(::testing::TempDir());
  for (bool generic_in : {false, true}) {
    std::string in = (dir / "roundtrip_in.mlir").string();
    std::ofstream(in) << print_module(*m, {.generic = generic_in});
    for (bool generic_out : {false, true}) {
      std::string out = (dir / "roundtrip_out.mlir").string();
      std::string cmd = tool + " " + in + (generic_out ? " --mlir-print-op-generic" : "") + " -o " + out;
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
      std::stringstream ss;
      ss << std::ifstream(out).rdbuf();
      EXPECT_EQ(print_module(*parse_module(ss.str(), out)), pretty) << cmd;
    }
  }
}

}  // namespace
}  // namespace netspec::hlo
