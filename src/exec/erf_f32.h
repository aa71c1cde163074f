// erf on f32 as XLA and Eigen compute it: x·P(x²)/Q(x²) with x clamped to [-4, 4] (|error| <
// 2e-7; erf(±4) = ±1 in f32). Coefficients only: exec/scalar_ops.h (Scalar<kErf>) and the vector
// kernels (exec/cpu/kernels/vmath_impl.h) evaluate them in the same order, Horner steps as fma.
#pragma once

namespace netspec::exec {

inline constexpr float kErfP[] = {
    -2.72614225801306e-10f, 2.77068142495902e-08f,  -2.10102402082508e-06f, -5.69250639462346e-05f,
    -7.34990630326855e-04f, -2.95459980854025e-03f, -1.60960333262415e-02f};
inline constexpr float kErfQ[] = {-1.45660718464996e-05f, -2.13374055278905e-04f,
                                  -1.68282697438203e-03f, -7.37332916720468e-03f,
                                  -1.42647390514189e-02f};
inline constexpr int kErfPLen = 7, kErfQLen = 5;

}  // namespace netspec::exec
