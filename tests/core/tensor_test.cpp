#include "core/tensor.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "core/error.h"

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

namespace netspec {
namespace {

// A tensor that cannot be allocated is refused naming its type and size (exit 2 in the CLI), not
// a bare "out of memory". Run in a child whose address space is capped at 1 GiB.
TEST(TensorMemory, AnAllocationFailureNamesTheTensorAndItsSize) {
  int fd[2];
  ASSERT_EQ(pipe(fd), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fd[0]);
    rlimit r{size_t{1} << 30, size_t{1} << 30};
    setrlimit(RLIMIT_AS, &r);
    std::string msg = "no error";
    try {
      Tensor t(DType::kF32, {int64_t{1} << 30});  // 4 GiB
    } catch (const Error& e) {
      msg = e.what();
    } catch (const std::exception& e) {
      msg = std::string("other: ") + e.what();
    }
    (void)!write(fd[1], msg.data(), msg.size());
    _exit(0);
  }
  close(fd[1]);
  std::string got;
  char buf[512];
  for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) > 0;) got.append(buf, size_t(n));
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(got, "[Tensor] out of memory allocating tensor<1073741824xf32> (4.00 GiB)");
}

}  // namespace
}  // namespace netspec
