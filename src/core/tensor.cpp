#include "core/tensor.h"

#include <fmt/format.h>

#include <cstdlib>
#include <new>

#include "core/bf16.h"
#include "core/checked.h"

namespace netspec {

int64_t num_elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n = checked_mul(n, d, "shape");
  return n;
}

std::string shape_str(const Shape& s) { return fmt::format("{}", fmt::join(s, "x")); }

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_)
    if (d < 0) throw Error(fmt::format("[Tensor] negative dimension in shape {}", shape_str(shape_)));
  numel_ = num_elements(shape_);
  checked_mul(numel_, static_cast<int64_t>(dtype_size(dtype_)), "Tensor");
  size_t bytes = nbytes();
  size_t alloc = ((bytes + 63) / 64) * 64;
  if (alloc == 0) alloc = 64;
  void* p = std::aligned_alloc(64, alloc);
  if (!p)  // named, so a refusal says which buffer and how large (not a bare "out of memory")
    throw Error(fmt::format("[Tensor] out of memory allocating {} ({:.2f} GiB)", type_str(),
                            static_cast<double>(alloc) / double(1ull << 30)));
  std::memset(p, 0, alloc);
  data_ = std::shared_ptr<uint8_t[]>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (nbytes()) std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

Tensor Tensor::wrap(DType dtype, Shape shape, std::shared_ptr<uint8_t[]> data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = num_elements(t.shape_);
  t.data_ = std::move(data);
  return t;
}

Tensor Tensor::reshaped(Shape s) const {
  if (num_elements(s) != numel_)
    throw Error(fmt::format("[Tensor::reshaped] element count differs (got {}, expected {})",
                            num_elements(s), numel_));
  Tensor t = *this;
  t.shape_ = std::move(s);
  return t;
}

Tensor Tensor::view_at(int64_t offset, Shape s) const {
  const int64_t n = num_elements(s);
  if (offset < 0 || offset + n > numel_)
    throw Error(fmt::format("[Tensor::view_at] elements [{}, {}) outside a tensor of {}", offset,
                            offset + n, numel_));
  Tensor t;
  t.dtype_ = dtype_;
  t.shape_ = std::move(s);
  t.numel_ = n;
  // shared_ptr's aliasing constructor: owns what data_ owns, points at the offset element
  t.data_ = std::shared_ptr<uint8_t[]>(data_, data_.get() + offset * int64_t(dtype_size(dtype_)));
  return t;
}

double Tensor::as_double(int64_t i) const {
  if (dtype_ == DType::kBF16) return bf16_to_f32(data<uint16_t>()[i]);
  return visit_dtype(dtype_, "Tensor::as_double",
                     [&](auto z) { return static_cast<double>(data<decltype(z)>()[i]); });
}

int64_t Tensor::as_int64(int64_t i) const {
  return visit_dtype(dtype_, "Tensor::as_int64",
                     [&](auto z) { return static_cast<int64_t>(data<decltype(z)>()[i]); });
}

std::string Tensor::type_str() const {
  if (shape_.empty()) return fmt::format("tensor<{}>", dtype_name(dtype_));
  return fmt::format("tensor<{}x{}>", shape_str(shape_), dtype_name(dtype_));
}

}  // namespace netspec
