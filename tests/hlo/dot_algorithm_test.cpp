// dot_general's `algorithm` (#stablehlo.dot_algorithm): parsed in the pretty and generic forms,
// printed back byte-identically, and checked against the spec's constraints C21-C24.
#include <gtest/gtest.h>

#include <string>

#include "hlo/text/parser.h"
#include "hlo/text/printer.h"

namespace netspec::hlo {
namespace {

const char* kPretty =
    "module {\n"
    "  func.func public @main(%arg0: tensor<2x2xf32>, %arg1: tensor<2x3xf32>) -> tensor<2x3xf32> "
    "{\n"
    "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = "
    "[DEFAULT, DEFAULT], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, "
    "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
    "num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, "
    "tensor<2x3xf32>) -> tensor<2x3xf32>\n"
    "    return %0 : tensor<2x3xf32>\n"
    "  }\n"
    "}\n";

TEST(DotAlgorithm, PrettyFormRoundTrips) {
  auto m = parse_module(kPretty);
  EXPECT_EQ(print_module(*m), kPretty);
  const Op& dot = *m->funcs[0]->body->ops[0];
  const auto& a = dot.attrs.get<DotAlgorithm>("algorithm");
  EXPECT_EQ(a.lhs_precision_type, "tf32");
  EXPECT_EQ(a.accumulation_type, "f32");
  EXPECT_EQ(a.num_primitive_operations, 1);
  EXPECT_FALSE(a.allow_imprecise_accumulation);
}

TEST(DotAlgorithm, GenericFormRoundTripsAndMatchesThePrettyOne) {
  auto m = parse_module(kPretty);
  std::string generic = print_module(*m, {true});
  EXPECT_NE(generic.find("algorithm = #stablehlo.dot_algorithm<lhs_precision_type = tf32, "
                         "rhs_precision_type = tf32, accumulation_type = f32, "
                         "lhs_component_count = 1, rhs_component_count = 1, "
                         "num_primitive_operations = 1, allow_imprecise_accumulation = false>"),
            std::string::npos)
      << generic;
  auto g = parse_module(generic);
  EXPECT_EQ(print_module(*g, {true}), generic);
  EXPECT_EQ(print_module(*g), kPretty);
}

std::string error_of(const std::string& text) {
  try {
    parse_module(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string with(const std::string& from, const std::string& to) {
  std::string s = kPretty;
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(DotAlgorithm, SpecConstraintsAreChecked) {
  // C21: precisions must be DEFAULT with an algorithm; C22-C24: positive counts.
  EXPECT_NE(error_of(with("[DEFAULT, DEFAULT]", "[HIGHEST, DEFAULT]"))
                .find("precision_config must be DEFAULT when an algorithm is given (got HIGHEST)"),
            std::string::npos);
  EXPECT_NE(error_of(with("num_primitive_operations = 1", "num_primitive_operations = 0"))
                .find("algorithm num_primitive_operations must be > 0 (got 0)"),
            std::string::npos);
  EXPECT_NE(error_of(with("lhs_component_count = 1", "lhs_component_count = -2"))
                .find("algorithm lhs_component_count must be > 0 (got -2)"),
            std::string::npos);
  EXPECT_NE(error_of(with("accumulation_type = f32, ", "")).find("accumulation_type"),
            std::string::npos);
  EXPECT_NE(
      error_of(with("allow_imprecise_accumulation = false", "allow_imprecise_accumulation = 3"))
          .find("expected true or false"),
      std::string::npos);
  EXPECT_NE(error_of(with("lhs_precision_type", "lhs_precision")).find("unknown field"),
            std::string::npos);
}

}  // namespace
}  // namespace netspec::hlo
