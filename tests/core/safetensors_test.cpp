#include "core/safetensors.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/error.h"

namespace netspec {
namespace {

TEST(SafeTensors, RoundTripKeepsOrderDtypesShapesAndMetadata) {
  SafeTensors st;
  st.tensors.emplace_back("layers.1.weight", Tensor::from<float>(DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6.5}));
  st.tensors.emplace_back("a.bias", Tensor::from<int>(DType::kI32, {1}, {-7}));
  st.tensors.emplace_back("s", Tensor::scalar_f32(0.25f));
  st.metadata["epoch"] = "3";
  std::string path = (std::filesystem::temp_directory_path() / "netspec_st.safetensors").string();
  write_safetensors(path, st);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  SafeTensors r = read_safetensors(path);
  ASSERT_EQ(r.tensors.size(), 3u);
  EXPECT_EQ(r.tensors[0].first, "layers.1.weight");
  EXPECT_EQ(r.tensors[1].first, "a.bias");
  EXPECT_EQ(r.at("layers.1.weight").shape(), (Shape{2, 3}));
  EXPECT_EQ(r.at("layers.1.weight").data<float>()[5], 6.5f);
  EXPECT_EQ(r.at("a.bias").dtype(), DType::kI32);
  EXPECT_EQ(r.at("a.bias").data<int32_t>()[0], -7);
  EXPECT_EQ(r.at("s").shape(), Shape{});
  EXPECT_EQ(r.metadata.at("epoch"), "3");
  // Header: 8-byte LE length, then JSON; the data starts 8-byte aligned.
  std::string b = encode_safetensors(st);
  uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= uint64_t(uint8_t(b[i])) << (8 * i);
  EXPECT_EQ(len % 8, 0u);
  EXPECT_EQ(b.size(), 8 + len + 6 * 4 + 4 + 4);
  EXPECT_EQ(b[8], '{');
  EXPECT_THROW(r.at("missing"), Error);
  EXPECT_THROW(decode_safetensors(b.substr(0, 20), "x"), Error);
}

}  // namespace
}  // namespace netspec
