// Host tensor: element type, static shape, and a 64-byte-aligned row-major buffer shared by
// copies (copy-on-write is the caller's business: clone() makes an independent copy).
// i1 is stored as one byte per element (0 or 1).
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace netspec {

using Shape = std::vector<int64_t>;

int64_t num_elements(const Shape& s);
std::string shape_str(const Shape& s);  // "2x3" ("" for a scalar)
// Row-major strides in elements.
std::vector<int64_t> row_major_strides(const Shape& s);

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);  // zero-filled

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
  bool defined() const { return data_ != nullptr || numel_ == 0; }
  // No other tensor (a copy, a view, an arena over the same allocation) shares this storage:
  // an executor may then write it in place (Executable::run_donating).
  bool storage_unique() const { return data_ && data_.use_count() == 1; }

  void* raw() { return data_.get(); }
  const void* raw() const { return data_.get(); }
  template <typename T>
  T* data() { return static_cast<T*>(raw()); }
  template <typename T>
  const T* data() const { return static_cast<const T*>(raw()); }
  template <typename T>
  std::span<T> span() { return {data<T>(), static_cast<size_t>(numel_)}; }
  template <typename T>
  std::span<const T> span() const { return {data<T>(), static_cast<size_t>(numel_)}; }

  Tensor clone() const;
  // A tensor over existing storage (no copy, no zero-fill): `data` must hold nbytes() bytes and
  // may alias a larger buffer (shared_ptr aliasing constructor). Used by executor arenas.
  static Tensor wrap(DType dtype, Shape shape, std::shared_ptr<uint8_t[]> data);
  // Same bytes, new shape with equal element count.
  Tensor reshaped(Shape s) const;
  // The elements [offset, offset + numel(s)) of this tensor's storage with shape s, no copy (a
  // contiguous slice: the storage stays alive while the view does).
  Tensor view_at(int64_t offset, Shape s) const;
  // Element i converted to double / int64 (for printing and tests; slow).
  double as_double(int64_t i) const;
  int64_t as_int64(int64_t i) const;
  // "tensor<2x3xf32>"
  std::string type_str() const;

  template <typename T>
  static Tensor from(DType dtype, Shape shape, const std::vector<T>& values);
  static Tensor scalar_f32(float v) { return from<float>(DType::kF32, {}, {v}); }

 private:
  DType dtype_ = DType::kF32;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<uint8_t[]> data_;
};

// Builds a tensor from a list of values converted to dtype (e.g. from<double>(kF32, {2}, {1, 2})).
template <typename T>
Tensor Tensor::from(DType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t(dtype, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw Error("[Tensor::from] value count does not match shape (got " +
                std::to_string(values.size()) + ", expected " + std::to_string(t.numel()) + ")");
  visit_dtype(dtype, "Tensor::from", [&](auto zero) {
    using E = decltype(zero);
    E* p = t.data<E>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<E>(values[i]);
  });
  return t;
}

}  // namespace netspec
