// Helpers shared by the per-family rule files verify_*.cpp (not a public contract).
// Each helper throws `[mnemonic] what is wrong (got X, expected Y)` through netspec::fail.
#pragma once
#include <fmt/format.h>

#include <string>
#include <vector>

#include "hlo/verify.h"

namespace netspec::hlo::vr {

inline std::string_view mn(const Op& op) { return op_mnemonic(op.kind); }

std::string i64s_str(const I64s& v);  // "[1, 2]"

void expect_num_operands(const Op& op, size_t n);
void expect_min_operands(const Op& op, size_t n);
void expect_num_regions(const Op& op, size_t n);
// Operand i must be a ranked tensor; returns its type.
const Type& tensor_operand(const Op& op, size_t i, std::string_view what = "operand");
// The only operand of a one-operand op (fails on any other count), a ranked tensor.
const Type& sole_tensor_operand(const Op& op);
// When `given` is empty returns `inferred`; otherwise checks they agree and returns `given`.
std::vector<Type> check_given(const Op& op, const std::vector<Type>& given,
                              std::vector<Type> inferred);
// A rule that needs the caller to state the result (reshape, iota, ...): exactly n given.
void require_given(const Op& op, const std::vector<Type>& given, size_t n);
// The one stated result (reshape, broadcast_in_dim), which must keep x's element type.
const Type& given_with_dtype_of(const Op& op, const std::vector<Type>& given, const Type& x);

// Dims unique and in [0, rank).
void check_dims(const Op& op, const I64s& dims, int64_t rank, std::string_view what);
void check_sorted(const Op& op, const I64s& dims, std::string_view what);
void check_size(const Op& op, size_t got, size_t expected, std::string_view what);
bool contains(const I64s& v, int64_t x);
// An optional attribute, when present, must hold a T (`what` names the expected kind).
template <typename T>
const T* optional_attr(const Op& op, const std::string& name, std::string_view what) {
  if (!op.attrs.has(name)) return nullptr;
  auto* p = op.attrs.get_if<T>(name);
  if (!p) fail(mn(op), "attribute '{}' must be {}", name, what);
  return p;
}

// I64s attribute or, when absent, `n` copies of `dflt`.
I64s i64s_or(const Op& op, const std::string& name, size_t n, int64_t dflt);
// The required I64s attribute `name`, checked to hold n entries.
const I64s& i64s_of_size(const Op& op, const std::string& name, size_t n);
// DenseAttr Nx2 padding (or zeros when absent) as (low, high) pairs; checks its shape.
std::vector<std::pair<int64_t, int64_t>> padding_attr(const Op& op, size_t n);

// The terminator's operand types of a region; fails if the region has no terminator.
std::vector<Type> region_results(const Op& op, size_t region, std::string_view what);
void expect_region_args(const Op& op, size_t region, const std::vector<Type>& expected,
                        std::string_view what);
void expect_region_results(const Op& op, size_t region, const std::vector<Type>& expected,
                           std::string_view what);
inline Type scalar(DType t) { return Type::tensor(t, {}); }
// Spec is_promotable(x, y): same class (bool / signed / unsigned / float) and y at least as wide.
bool is_promotable(DType from, DType to);
// Element types E_i of a reducer-style region (tensor<E0>, ..., tensor<EN-1>, tensor<E0>, ...)
// -> (tensor<E0>, ...), where each input element type `in[i]` is promotable to E_i.
std::vector<DType> check_accumulator_region(const Op& op, size_t region,
                                            const std::vector<DType>& in, std::string_view what);

// Output size of a window op along one dim (spec: convolution / reduce_window shape formula):
// dilated input (in-1)*base+1, padded by lo+hi, window (w-1)*wd+1; 0 if the window is larger.
int64_t window_out_size(const Op& op, int64_t in, int64_t base_dil, int64_t lo, int64_t hi,
                        int64_t window, int64_t win_dil, int64_t stride);
// Arithmetic on sizes from attributes: fail instead of overflowing.
int64_t checked_add(const Op& op, int64_t a, int64_t b);
int64_t checked_mul(const Op& op, int64_t a, int64_t b);
int64_t checked_numel(const Op& op, const Type& t);

// Element-type classes accepted by an elementwise op (the spec's "Inputs" tables).
enum Allowed : unsigned {
  kFloat = 1,
  kSInt = 2,
  kUInt = 4,
  kBool = 8,
  kInt = kSInt | kUInt,
  kNum = kFloat | kInt,
  kAny = kNum | kBool
};
bool allowed(DType t, unsigned mask);
const char* mask_str(unsigned mask);  // "integer or floating-point"

}  // namespace netspec::hlo::vr
