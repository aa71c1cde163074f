// print(parse(text)) == text for the pretty and generic forms of a module that uses every op
// kind, and the two forms parse to the same module.
#include <gtest/gtest.h>

#include <set>

#include "hlo/parser.h"
#include "hlo/printer.h"
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

}  // namespace
}  // namespace netspec::hlo
