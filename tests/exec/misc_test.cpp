// constant, iota and rng_bit_generator on every backend. RNG expectations are the Random123
// known-answer vectors for key 0 / counter 0 (Threefry2x32-20: 0x6b200159 0x99ba4efe;
// Philox4x32-10: 0x6627e8d5 0xe169c58d 0xbc57ac4c 0x9b00dbd8), laid out as XLA lays them.
#include "exec/test_util.h"

namespace netspec::testing {
namespace {

class MiscTest : public BackendTest {};

TEST_P(MiscTest, ConstantAndSplat) {
  auto got = run({}, [](Builder& b, const Values&) {
    return Values{b.constant(i32({2, 2}, {1, 2, 3, 4})),
                  b.constant_splat(-0.0, Type::tensor(DType::kF32, {3})), b.constant(f32({0}, {}))};
  });
  ASSERT_EQ(got.size(), 3u);
  expect_equal(got[0], i32({2, 2}, {1, 2, 3, 4}));
  expect_equal(got[1], f32({3}, {-0.0, -0.0, -0.0}));
  expect_equal(got[2], f32({0}, {}));
}

TEST_P(MiscTest, Iota) {
  auto got = run({}, [](Builder& b, const Values&) {
    return Values{b.iota(Type::tensor(DType::kI32, {2, 3}), 1),
                  b.iota(Type::tensor(DType::kF32, {2, 3}), 0),
                  b.iota(Type::tensor(DType::kI64, {0}), 0)};
  });
  expect_equal(got.at(0), i32({2, 3}, {0, 1, 2, 0, 1, 2}));
  expect_equal(got.at(1), f32({2, 3}, {0, 0, 0, 1, 1, 1}));
  expect_equal(got.at(2), i64({0}, {}));
}

std::vector<Tensor> rng(const std::string& be, const Tensor& state, const Type& out,
                        const char* alg) {
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

// Values below were produced by XLA's CPU compiler (jaxlib 0.10.2) for the same modules.
TEST_P(MiscTest, ThreeFryLayoutsMatchXla) {
  // No even dim: XLA splits the largest dim (rows interleave x0 / x1 of counters 0..5).
  auto sq = rng(backend(), ui64({2}, {0, 0}), Type::tensor(DType::kUI32, {3, 3}), "THREE_FRY");
  expect_equal(sq.at(1),
               ui32({3, 3}, {0x6b200159u, 0x508efb2cu, 0x64a626ecu, 0x99ba4efeu, 0xc0de3f32u,
                             0xfc15e573u, 0xb8abc4d1u, 0xac6dc2bbu, 0x5641e094u}));
  expect_equal(sq.at(0), ui64({2}, {0, 6}));
  auto u64 = rng(backend(), ui64({2}, {0, 0}), Type::tensor(DType::kUI64, {3}), "THREE_FRY");
  expect_equal(u64.at(1),
               ui64({3}, {0x99ba4efe6b200159ull, 0xc0de3f32508efb2cull, 0xfc15e57364a626ecull}));
  // Narrow outputs keep the low bits of the 32-bit values.
  auto u16 = rng(backend(), ui64({2}, {0, 0}), Type::tensor(DType::kUI16, {3}), "THREE_FRY");
  expect_equal(u16.at(1), make<uint64_t>(DType::kUI16, {3}, {0x0159, 0x4efe, 0xfb2c}));
  expect_equal(u16.at(0), ui64({2}, {0, 2}));
}

TEST_P(MiscTest, PhiloxLayoutsMatchXla) {
  auto carry = rng(backend(), ui64({3}, {0, ~0ull, 0}), Type::tensor(DType::kUI32, {5}), "PHILOX");
  expect_equal(carry.at(1),
               ui32({5}, {0xf3ce744du, 0xdfb9980fu, 0x5a7caad1u, 0x25d14252u, 0x844515e1u}));
  auto keyed = rng(backend(), ui64({3}, {5, 9, 1}), Type::tensor(DType::kUI32, {2, 3}), "PHILOX");
  expect_equal(keyed.at(1), ui32({2, 3}, {0x8b93a9a1u, 0x5df80a95u, 0x8c43b06au, 0x6fccfa17u,
                                          0x6ad6a0eeu, 0x9aabf83au}));
  expect_equal(keyed.at(0), ui64({3}, {5, 11, 1}));
  auto wide = rng(backend(), ui64({3}, {0, 0, 0}), Type::tensor(DType::kUI64, {3}), "DEFAULT");
  expect_equal(wide.at(1),
               ui64({3}, {0xe169c58d6627e8d5ull, 0x9b00dbd8bc57ac4cull, 0x5cb200dbf8e4cca4ull}));
  expect_equal(wide.at(0), ui64({3}, {0, 2, 0}));
}

TEST_P(MiscTest, PhiloxTwoElementStateMatchesXla) {
  auto a = rng(backend(), ui64({2}, {5, 6}), Type::tensor(DType::kUI32, {2, 2}), "DEFAULT");
  expect_equal(a.at(0), ui64({2}, {5, 7}));
  expect_equal(a.at(1), ui32({2, 2}, {0x575fdd5bu, 0x57935a08u, 0x59971013u, 0x713caca4u}));
  auto b = rng(backend(), ui64({2}, {5, ~0ull}), Type::tensor(DType::kUI32, {2, 2}), "PHILOX");
  expect_equal(b.at(0), ui64({2}, {5, 0}));
  expect_equal(b.at(1), ui32({2, 2}, {0x4e5aa1bau, 0xf08b4400u, 0x979e52b9u, 0xf8215f0cu}));
  auto c = rng(backend(), ui64({3}, {5, 6, 0}), Type::tensor(DType::kUI32, {2, 2}), "PHILOX");
  expect_equal(c.at(1), ui32({2, 2}, {0xfeb0d801u, 0xb4000318u, 0x4e27587eu, 0xd4548170u}));
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
