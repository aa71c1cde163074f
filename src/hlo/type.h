// IR types: static ranked tensors (tensor<2x3xf32>), tuples (tuple<...>) and !stablehlo.token.
#pragma once
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace netspec::hlo {

class Type {
 public:
  enum class Kind { kTensor, kTuple, kToken };

  Type() = default;
  static Type tensor(DType dtype, Shape shape) { return Type(Kind::kTensor, dtype, std::move(shape), {}); }
  static Type tuple(std::vector<Type> elems) { return Type(Kind::kTuple, DType::kF32, {}, std::move(elems)); }
  static Type token() { return Type(Kind::kToken, DType::kF32, {}, {}); }

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  bool is_token() const { return kind_ == Kind::kToken; }
  // Tensor accessors (meaningless for tuples and tokens).
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t numel() const { return num_elements(shape_); }
  Type with_dtype(DType t) const { return tensor(t, shape_); }
  Type with_shape(Shape s) const { return tensor(dtype_, std::move(s)); }
  // Tuple elements.
  const std::vector<Type>& elems() const { return elems_; }

  bool operator==(const Type& o) const {
    return kind_ == o.kind_ && (kind_ != Kind::kTensor || (dtype_ == o.dtype_ && shape_ == o.shape_)) &&
           elems_ == o.elems_;
  }
  bool operator!=(const Type& o) const { return !(*this == o); }
  // MLIR spelling: "tensor<2x3xf32>", "tensor<f32>", "tuple<tensor<f32>, tensor<i1>>", "!stablehlo.token".
  std::string str() const;

 private:
  Type(Kind k, DType d, Shape s, std::vector<Type> e)
      : kind_(k), dtype_(d), shape_(std::move(s)), elems_(std::move(e)) {}
  Kind kind_ = Kind::kTensor;
  DType dtype_ = DType::kF32;
  Shape shape_;
  std::vector<Type> elems_;
};

std::string types_str(const std::vector<Type>& ts);  // "tensor<f32>, tensor<2xi1>"

}  // namespace netspec::hlo
