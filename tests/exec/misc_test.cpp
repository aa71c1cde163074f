// constant, iota and rng_bit_generator on every backend. RNG expectations are the Random123
// known-answer vectors for key 0 / counter 0 (Threefry2x32-20: 0x6b200159 0x99ba4efe;
// Philox4x32-10: 0x6627e8d5 0xe169c58d 0xbc57ac4c 0x9b00dbd8), laid out as XLA lays them.
#include "exec/test_util.h"

namespace netspec::testing {
namespace {

class MiscTest : public BackendTest {};

TEST_P(MiscTest, ConstantAndSplat) {
  auto got = run({}, [](Builder& b, const Values&) {
    return Values{b.constant(i32({2, 2}, {1, 2, 3, 4})), b.constant_splat(-0.0, Type::tensor(DType::kF32, {3})),
                  b.constant(f32({0}, {}))};
  });
  ASSERT_EQ(got.size(), 3u);
  expect_equal(got[0], i32({2, 2}, {1, 2, 3, 4}));
  expect_equal(got[1], f32({3}, {-0.0, -0.0, -0.0}));
  expect_equal(got[2], f32({0}, {}));
}

TEST_P(MiscTest, Iota) {
  auto got = run({}, [](Builder& b, const Values&) {
    return Values{b.iota(Type::tensor(DType::kI32, {2, 3}), 1), b.iota(Type::tensor(DType::kF32, {2, 3}), 0),
                  b.iota(Type::tensor(DType::kI64, {0}), 0)};
  });
  expect_equal(got.at(0), i32({2, 3}, {0, 1, 2, 0, 1, 2}));
  expect_equal(got.at(1), f32({2, 3}, {0, 0, 0, 1, 1, 1}));
  expect_equal(got.at(2), i64({0}, {}));
}

std::vector<Tensor> rng(const std::string& be, const Tensor& state, const Type& out, const char* alg) {
  return run_fn(be, {state}, [&](Builder& b, const Values& a) {
    auto [s, v] = b.rng_bit_generator(a[0], out, alg);
    return Values{s, v};
  });
}

TEST_P(MiscTest, ThreeFryKnownAnswer) {
  auto got = rng(backend(), ui64({2}, {0, 0}), Type::tensor(DType::kUI32, {3, 2}), "THREE_FRY");
  ASSERT_EQ(got.size(), 2u);
  expect_equal(got[0], ui64({2}, {0, 3}));  // one counter per pair of 32-bit outputs
  EXPECT_EQ(static_cast<uint32_t>(got[1].as_int64(0)), 0x6b200159u);
  EXPECT_EQ(static_cast<uint32_t>(got[1].as_int64(1)), 0x99ba4efeu);
  // Counters 1 and 2 (values as printed by an XLA-backed run, to 5 digits).
  EXPECT_NEAR(static_cast<double>(got[1].as_int64(2)), 1.3515e9, 1e5);
  EXPECT_NEAR(static_cast<double>(got[1].as_int64(3)), 3.2358e9, 1e5);
  EXPECT_NEAR(static_cast<double>(got[1].as_int64(4)), 1.6886e9, 1e5);
  EXPECT_NEAR(static_cast<double>(got[1].as_int64(5)), 4.2293e9, 1e5);
  auto wide = rng(backend(), ui64({2}, {0, 0}), Type::tensor(DType::kUI64, {1}), "THREE_FRY");
  expect_equal(wide.at(1), ui64({1}, {0x99ba4efe6b200159ull}));
  expect_equal(wide.at(0), ui64({2}, {0, 1}));
}

TEST_P(MiscTest, PhiloxKnownAnswerAndDefault) {
  for (const char* alg : {"PHILOX", "DEFAULT"}) {
    auto got = rng(backend(), ui64({3}, {0, 0, 0}), Type::tensor(DType::kUI32, {4}), alg);
    ASSERT_EQ(got.size(), 2u);
    expect_equal(got[0], ui64({3}, {0, 1, 0}), alg);
    expect_equal(got[1], ui32({4}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}), alg);
  }
  // Counter carry into the high word.
  auto got = rng(backend(), ui64({3}, {0, ~0ull, 0}), Type::tensor(DType::kUI32, {5}), "PHILOX");
  expect_equal(got.at(0), ui64({3}, {0, 1, 1}));
}

TEST_P(MiscTest, RngStreamsDifferByCounter) {
  auto a = rng(backend(), ui64({2}, {7, 0}), Type::tensor(DType::kUI32, {4}), "THREE_FRY");
  auto b = rng(backend(), ui64({2}, {7, 2}), Type::tensor(DType::kUI32, {4}), "THREE_FRY");
  // With 4 outputs (2 counters per call), counter 2 continues the stream where counter 0 ended.
  auto c = rng(backend(), ui64({2}, {7, 0}), Type::tensor(DType::kUI32, {8}), "THREE_FRY");
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a[1].as_int64(i), c[1].as_int64(i));
    EXPECT_EQ(b[1].as_int64(i), c[1].as_int64(4 + i));
  }
}

NETSPEC_ON_BACKENDS(MiscTest);

}  // namespace
}  // namespace netspec::testing
