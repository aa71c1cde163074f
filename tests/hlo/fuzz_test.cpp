// Mutation fuzz test for the parser: byte flips, token deletions and duplications, truncations
// and number changes applied to valid modules. Every mutant must either parse (and then print
// to a fixed point) or throw ParseError; anything else (another exception, a crash or a
// sanitizer report under NETSPEC_SANITIZE) fails. Deterministic; NETSPEC_FUZZ_SECONDS and
// NETSPEC_FUZZ_SEED change the budget and the seed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "parser_samples.h"

namespace netspec::hlo {
namespace {

const char* kSmallSeeds[] = {
    R"(#loc = loc(unknown)
module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> {jax.arg_info = "x"}, %arg1: tensor<3xf32>) -> (tensor<2xf32> {jax.result_info = ""}) {
    %cst = stablehlo.constant dense<[1.000000e+00, 0x7FC00000, -2.5]> : tensor<3xf32> loc(#loc)
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<2x3xf32>
    %c = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %3 = call @helper(%2) : (tensor<2xf32>) -> tensor<2xf32>
    return %3 : tensor<2xf32>
  }
  func.func private @helper(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.slice %arg0 [0:2:1] : (tensor<2xf32>) -> tensor<2xf32>
    %1 = stablehlo.compare  GE, %0, %arg0,  FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
    %2 = stablehlo.select %1, %0, %arg0 : tensor<2xi1>, tensor<2xf32>
    func.return %2 : tensor<2xf32>
  }
}
)",
    R"(func.func @main(%arg0: tensor<1x2x5x5xf32>, %arg1: tensor<4x2x3x3xf32>, %arg2: tensor<4xi32>) -> tensor<1x4x3x2xf32> {
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 2], pad = [[1, 1], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x2xf32>
  %c = stablehlo.constant dense<"0x00000000"> : tensor<i32>
  %w:2 = stablehlo.while(%i = %c, %v = %arg2) : tensor<i32>, tensor<4xi32>
   cond {
    %lim = stablehlo.constant dense<4> : tensor<i32>
    %p = stablehlo.compare  LT, %i, %lim,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %n = stablehlo.add %i, %one : tensor<i32>
    %s = stablehlo.dynamic_slice %v, %i, sizes = [1] : (tensor<4xi32>, tensor<i32>) -> tensor<1xi32>
    %u = stablehlo.dynamic_update_slice %v, %s, %n : (tensor<4xi32>, tensor<1xi32>, tensor<i32>) -> tensor<4xi32>
    stablehlo.return %n, %u : tensor<i32>, tensor<4xi32>
  }
  return %0 : tensor<1x4x3x2xf32>
}
)",
    R"("builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x3xf32>, %arg1: tensor<2x1xi32>):
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<2x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
    %1 = "stablehlo.scatter"(%arg0, %arg1, %0) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %2 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%2) : (tensor<f32>) -> ()
    }) : (tensor<2x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %z = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce_window"(%1, %z) <{padding = dense<[[0, 0], [0, 1]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 2>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %4 = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%4) : (tensor<f32>) -> ()
    }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    "func.return"(%3) : (tensor<2x3xf32>) -> ()
  }) : () -> ()
}) : () -> ()
)",
};

std::string mutate(const std::string& s, std::mt19937_64& rng) {
  if (s.empty()) return s;
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::string t = s;
  size_t p = pick(t.size());
  // Extent of the "token" around p: a run of non-space characters.
  auto token_end = [&](size_t i) {
    while (i < t.size() && t[i] != ' ' && t[i] != '\n') ++i;
    return i;
  };
  static const std::string kInteresting = "%@#!^(){}[]<>,:=-x\"0123456789.e?*\\ \n";
  switch (pick(8)) {
    case 0:  // byte flip
      t[p] = static_cast<char>(rng() & 0xFF);
      break;
    case 1:  // interesting character
      t[p] = kInteresting[pick(kInteresting.size())];
      break;
    case 2: {  // delete a token
      size_t e = token_end(p);
      t.erase(p, std::max<size_t>(1, e - p));
      break;
    }
    case 3: {  // duplicate a token
      size_t e = token_end(p);
      t.insert(p, t.substr(p, std::max<size_t>(1, e - p)));
      break;
    }
    case 4:  // truncate
      t.resize(p);
      break;
    case 5: {  // change a number
      size_t d = t.find_first_of("0123456789", p);
      if (d == std::string::npos) break;
      size_t e = t.find_first_not_of("0123456789", d);
      static const char* kNums[] = {"0", "1", "-1", "2", "3", "7", "64", "4294967296", "99999999999999999999",
                                    "9223372036854775807", "-9223372036854775808", "100000", "65"};
      t.replace(d, (e == std::string::npos ? t.size() : e) - d, kNums[pick(std::size(kNums))]);
      break;
    }
    case 6: {  // swap two lines
      size_t a = t.rfind('\n', p);
      a = a == std::string::npos ? 0 : a + 1;
      size_t b = t.find('\n', a);
      if (b == std::string::npos || b + 1 >= t.size()) break;
      size_t c = t.find('\n', b + 1);
      if (c == std::string::npos) break;
      std::string l1 = t.substr(a, b - a), l2 = t.substr(b + 1, c - b - 1);
      t.replace(a, c - a, l2 + "\n" + l1);
      break;
    }
    default: {  // copy a random slice elsewhere
      size_t q = pick(t.size()), n = 1 + pick(40);
      t.insert(q, t.substr(p, n));
      break;
    }
  }
  return t;
}

TEST(Fuzz, MutatedModulesParseOrFailCleanly) {
  std::vector<std::string> seeds(std::begin(kSmallSeeds), std::end(kSmallSeeds));
  auto big = testing::all_ops_module();
  seeds.push_back(print_module(*big));
  seeds.push_back(print_module(*big, {.generic = true}));
  for (const auto& s : seeds) ASSERT_NO_THROW(parse_module(s)) << s;

  double budget = 20.0;
  if (const char* b = std::getenv("NETSPEC_FUZZ_SECONDS")) budget = std::atof(b);
  uint64_t seed = 12345;
  if (const char* s = std::getenv("NETSPEC_FUZZ_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::mt19937_64 rng(seed);
  auto start = std::chrono::steady_clock::now();
  int n = 0, parsed = 0, failures = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < budget) {
    // Small seeds most of the time: they are fast and reach every syntax.
    size_t si = rng() % 16 < 14 ? rng() % std::size(kSmallSeeds) : std::size(kSmallSeeds) + rng() % 2;
    std::string text = seeds[si];
    int rounds = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < rounds; ++r) text = mutate(text, rng);
    ++n;
    try {
      auto m = parse_module(text, "fuzz.mlir");
      ++parsed;
      std::string p1 = print_module(*m);
      std::string p2 = print_module(*parse_module(p1, "reprint.mlir"));
      if (p1 != p2) {
        ADD_FAILURE() << "printing is not a fixed point for mutant:\n" << text;
        if (++failures > 5) break;
      }
    } catch (const ParseError& e) {
      std::string w = e.what();
      if (w.rfind("fuzz.mlir:", 0) != 0) {
        ADD_FAILURE() << "ParseError without the file prefix: " << w << "\nmutant:\n" << text;
        if (++failures > 5) break;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "non-ParseError exception: " << e.what() << "\nmutant:\n" << text;
      if (++failures > 5) break;
    }
  }
  std::printf("fuzz: %d mutants, %d parsed, seed %llu\n", n, parsed, static_cast<unsigned long long>(seed));
  EXPECT_GT(n, 100);
}

}  // namespace
}  // namespace netspec::hlo
