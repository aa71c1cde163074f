// npy I/O: byte-exact header layout (as numpy writes format 1.0), round trips per dtype, and
// clear errors on malformed files.
#include "core/npy.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace netspec {
namespace {

TEST(Npy, HeaderMatchesNumpyLayout) {
  Tensor t = Tensor::from<float>(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  std::string b = encode_npy(t);
  // numpy.save writes exactly this header for a float32 (2, 3) C-order array.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ASSERT_EQ(b.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(b.substr(10, dict.size()), dict);
  EXPECT_EQ((10 + static_cast<size_t>(static_cast<unsigned char>(b[8]))) % 64, 0u);
  EXPECT_EQ(b[9 + 1 + static_cast<unsigned char>(b[8]) - 1], '\n');
  // numpy pads magic+len+dict+'\n' to 64 bytes: 10 + 60 + 1 = 71 -> 128, header_len 118.
  EXPECT_EQ(static_cast<unsigned char>(b[8]), 118);
  EXPECT_EQ(b.size(), 128u + 24u);
}

TEST(Npy, OneDimShapeHasTrailingComma) {
  std::string b = encode_npy(Tensor::from<int32_t>(DType::kI32, {3}, {1, 2, 3}));
  EXPECT_NE(b.find("'shape': (3,), "), std::string::npos);
  std::string s = encode_npy(Tensor::from<double>(DType::kF64, {}, {2.5}));
  EXPECT_NE(s.find("'shape': (), "), std::string::npos);
  EXPECT_NE(s.find("'<f8'"), std::string::npos);
}

TEST(Npy, RoundTripsEveryDtype) {
  for (DType dt : {DType::kI1, DType::kI8, DType::kI32, DType::kI64, DType::kUI8, DType::kUI32,
                   DType::kUI64, DType::kF32, DType::kF64}) {
    Tensor t = Tensor::from<int>(dt, {2, 2}, {0, 1, 1, 0});
    Tensor u = decode_npy(encode_npy(t));
    EXPECT_EQ(u.dtype(), dt);
    EXPECT_EQ(u.shape(), (Shape{2, 2}));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(u.as_int64(i), t.as_int64(i)) << dtype_name(dt);
  }
  std::string b = encode_npy(Tensor(DType::kI1, {1}));
  EXPECT_NE(b.find("'|b1'"), std::string::npos);
}

TEST(Npy, ZeroSizeRoundTrip) {
  Tensor u = decode_npy(encode_npy(Tensor(DType::kF32, {0, 3})));
  EXPECT_EQ(u.shape(), (Shape{0, 3}));
  EXPECT_EQ(u.numel(), 0);
}

TEST(Npy, FileRoundTrip) {
  auto p = std::filesystem::temp_directory_path() / "netspec_npy_test.npy";
  write_npy(p.string(), Tensor::from<float>(DType::kF32, {3}, {1.5f, -2.f, 0.25f}));
  Tensor t = read_npy(p.string());
  EXPECT_FLOAT_EQ(t.data<float>()[0], 1.5f);
  EXPECT_FLOAT_EQ(t.data<float>()[1], -2.f);
  EXPECT_FLOAT_EQ(t.data<float>()[2], 0.25f);
  std::filesystem::remove(p);
}

TEST(Npy, ErrorsNameTheProblem) {
  EXPECT_THROW(
      {
        try {
          decode_npy("not an npy file", "x.npy");
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("x.npy: not a .npy file"), std::string::npos);
          throw;
        }
      },
      Error);
  std::string b = encode_npy(Tensor(DType::kF32, {4}));
  b.resize(b.size() - 1);  // truncated data
  try {
    decode_npy(b, "t.npy");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("got 15 bytes, expected 16"), std::string::npos) << e.what();
  }
  std::string f = encode_npy(Tensor(DType::kF32, {2}));
  f.replace(f.find("False"), 5, "True ");
  EXPECT_THROW(decode_npy(f, "f.npy"), Error);
  EXPECT_THROW(read_npy("/nonexistent/dir/a.npy"), Error);
}

}  // namespace
}  // namespace netspec
