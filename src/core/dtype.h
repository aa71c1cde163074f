// Element types. One table (kDTypeTable in dtype.cpp) gives each type's MLIR spelling, size and
// class; kernels dispatch on DType through visit_dtype so adding bf16/f16 kernels touches the
// dispatcher, not every op.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace netspec {

enum class DType : uint8_t { kI1, kI8, kI16, kI32, kI64, kUI8, kUI16, kUI32, kUI64, kBF16, kF16, kF32, kF64 };

std::string_view dtype_name(DType t);             // MLIR spelling: "f32", "i1", "ui32"
std::optional<DType> dtype_from_name(std::string_view s);
size_t dtype_size(DType t);                       // bytes per element (i1 is stored as one byte)
int dtype_bits(DType t);                          // bit width (i1 -> 1)
bool is_float(DType t);
bool is_integer(DType t);                         // signed or unsigned, not i1
bool is_signed_integer(DType t);
bool is_unsigned_integer(DType t);
inline bool is_bool(DType t) { return t == DType::kI1; }

// Calls f(T{}) with the C++ storage type of t for the types executors compute on
// (i1 -> bool, i8..i64, ui8..ui64, f32, f64). bf16/f16 throw an Error naming `where`.
template <typename F>
decltype(auto) visit_dtype(DType t, const char* where, F&& f);

}  // namespace netspec

#include "core/dtype_visit.h"
