#include "core/dtype.h"

#include <array>

namespace netspec {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t size;
  int bits;
  char cls;  // 'b' bool, 's' signed, 'u' unsigned, 'f' float
};

constexpr std::array<DTypeInfo, 13> kDTypeTable{{
    {DType::kI1, "i1", 1, 1, 'b'},       {DType::kI8, "i8", 1, 8, 's'},
    {DType::kI16, "i16", 2, 16, 's'},    {DType::kI32, "i32", 4, 32, 's'},
    {DType::kI64, "i64", 8, 64, 's'},    {DType::kUI8, "ui8", 1, 8, 'u'},
    {DType::kUI16, "ui16", 2, 16, 'u'},  {DType::kUI32, "ui32", 4, 32, 'u'},
    {DType::kUI64, "ui64", 8, 64, 'u'},  {DType::kBF16, "bf16", 2, 16, 'f'},
    {DType::kF16, "f16", 2, 16, 'f'},    {DType::kF32, "f32", 4, 32, 'f'},
    {DType::kF64, "f64", 8, 64, 'f'},
}};

const DTypeInfo& info(DType t) { return kDTypeTable[static_cast<size_t>(t)]; }

}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
std::optional<DType> dtype_from_name(std::string_view s) {
  for (const auto& i : kDTypeTable)
    if (i.name == s) return i.type;
  return std::nullopt;
}
size_t dtype_size(DType t) { return info(t).size; }
int dtype_bits(DType t) { return info(t).bits; }
bool is_float(DType t) { return info(t).cls == 'f'; }
bool is_integer(DType t) { return info(t).cls == 's' || info(t).cls == 'u'; }
bool is_signed_integer(DType t) { return info(t).cls == 's'; }
bool is_unsigned_integer(DType t) { return info(t).cls == 'u'; }

}  // namespace netspec
