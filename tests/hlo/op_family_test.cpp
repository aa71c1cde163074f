// FamilyTable: a family file may only fill the ops ops.def files under its families.
#include "hlo/op_family.h"

#include <gtest/gtest.h>

#include <array>

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

}  // namespace
}  // namespace netspec::hlo
