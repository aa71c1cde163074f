#include "core/tensor.h"

#include <gtest/gtest.h>

namespace netspec {
namespace {

TEST(DType, NamesAndSizes) {
  EXPECT_EQ(dtype_name(DType::kF32), "f32");
  EXPECT_EQ(dtype_name(DType::kUI64), "ui64");
  EXPECT_EQ(dtype_from_name("i1"), DType::kI1);
  EXPECT_FALSE(dtype_from_name("f33").has_value());
  EXPECT_EQ(dtype_size(DType::kI1), 1u);
  EXPECT_EQ(dtype_bits(DType::kI1), 1);
  EXPECT_EQ(dtype_size(DType::kF64), 8u);
  EXPECT_TRUE(is_float(DType::kBF16));
  EXPECT_TRUE(is_unsigned_integer(DType::kUI8));
  EXPECT_FALSE(is_integer(DType::kI1));
}

TEST(Tensor, ShapeStridesAndValues) {
  Tensor t = Tensor::from<double>(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_EQ(row_major_strides(t.shape()), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t.type_str(), "tensor<2x3xf32>");
  EXPECT_EQ(Tensor(DType::kI1, {}).type_str(), "tensor<i1>");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % 64, 0u);
  Tensor c = t.clone();
  c.data<float>()[0] = 9;
  EXPECT_EQ(t.as_double(0), 1.0);
  EXPECT_EQ(c.reshaped({3, 2}).shape(), (Shape{3, 2}));
  EXPECT_THROW(t.reshaped({4}), Error);
  EXPECT_THROW((Tensor::from<int>(DType::kI32, {2}, {1, 2, 3})), Error);
}

TEST(Tensor, UnsupportedDtypeNamesItself) {
  try {
    Tensor(DType::kF16, {1}).as_double(0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f16"), std::string::npos);
  }
}

}  // namespace
}  // namespace netspec
