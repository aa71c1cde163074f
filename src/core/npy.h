// NumPy .npy files, format 1.0 (and reading 2.0/3.0 headers), little-endian, C order.
// Element types: f32 <f4, f64 <f8, i1 |b1, i8/i16/i32/i64 <iN, ui8..ui64 <uN, f16 <f2.
// Errors name the file and what is wrong ("[npy] x.npy: fortran_order arrays are not supported").
#pragma once
#include <string>

#include "core/tensor.h"

namespace netspec {

void write_npy(const std::string& path, const Tensor& t);
Tensor read_npy(const std::string& path);
// In-memory forms (used by the file functions and by tests).
std::string encode_npy(const Tensor& t);
Tensor decode_npy(const std::string& bytes, const std::string& name = "<memory>");

}  // namespace netspec
