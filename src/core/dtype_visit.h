// Implementation detail of visit_dtype (see dtype.h).
#pragma once
#include <cstdint>

#include "core/error.h"

namespace netspec {

template <typename F>
decltype(auto) visit_dtype(DType t, const char* where, F&& f) {
  switch (t) {
    case DType::kI1: return f(bool{});
    case DType::kI8: return f(int8_t{});
    case DType::kI16: return f(int16_t{});
    case DType::kI32: return f(int32_t{});
    case DType::kI64: return f(int64_t{});
    case DType::kUI8: return f(uint8_t{});
    case DType::kUI16: return f(uint16_t{});
    case DType::kUI32: return f(uint32_t{});
    case DType::kUI64: return f(uint64_t{});
    case DType::kF32: return f(float{});
    case DType::kF64: return f(double{});
    case DType::kBF16:
    case DType::kF16: break;
  }
  fail(where, "element type {} is not supported by this executor yet", dtype_name(t));
}

}  // namespace netspec
