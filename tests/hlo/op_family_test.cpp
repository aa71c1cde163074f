// FamilyTable: a family file may only fill the ops ops.def files under its families.
#include "hlo/op_family.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "hlo/op_families.h"

namespace netspec::hlo {
namespace {

TEST(FamilyTable, FillsItsFamiliesAndRefusesOthers) {
  std::array<int, kNumOpKinds> t{};
  FamilyTable<int> ft(t.data(), "test.cpp", {"gather", "sort"});
  ft.set(OpKind::kSort, 7);
  EXPECT_EQ(t[static_cast<size_t>(OpKind::kSort)], 7);
  try {
    ft.set(OpKind::kReduce, 1);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("stablehlo.reduce is of family 'reduce'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("gather, sort"), std::string::npos) << msg;
  }
  EXPECT_EQ(t[static_cast<size_t>(OpKind::kReduce)], 0);
}

TEST(FamilyTable, SetFamilyFillsEveryOpOfTheFamily) {
  std::array<int, kNumOpKinds> t{};
  FamilyTable<int>(t.data(), "test.cpp", {"misc"}).set_family("misc", 3);
  for (size_t i = 0; i < kNumOpKinds; ++i)
    EXPECT_EQ(t[i], op_family(static_cast<OpKind>(i)) == "misc" ? 3 : 0) << op_name(OpKind(i));
  EXPECT_EQ(t[static_cast<size_t>(OpKind::kIota)], 3);
}

// NETSPEC_SHAPE_FAMILY, from which the shape family's type rules, ref kernels and VJP rules are
// registered, lists exactly ops.def's shape ops in order, each name its mnemonic's tail.
TEST(FamilyTable, ShapeFamilyListMatchesOpsDef) {
  std::vector<std::pair<OpKind, std::string>> listed;
#define NETSPEC_LIST(kind, name) listed.emplace_back(OpKind::kind, #name);
  NETSPEC_SHAPE_FAMILY(NETSPEC_LIST)
#undef NETSPEC_LIST
  std::vector<std::pair<OpKind, std::string>> want;
  for (size_t i = 0; i < kNumOpKinds; ++i) {
    const auto k = static_cast<OpKind>(i);
    if (op_family(k) == "shape") want.emplace_back(k, std::string(op_name(k)).substr(10));
  }
  ASSERT_EQ(want.size(), 9u);  // reshape ... reverse
  EXPECT_EQ(listed, want);
  for (const auto& [k, name] : want) EXPECT_EQ(op_name(k), "stablehlo." + name);
}

}  // namespace
}  // namespace netspec::hlo
