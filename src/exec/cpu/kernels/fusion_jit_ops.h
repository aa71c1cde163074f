// The instruction layer of generated fused code (fusion_jit.cpp): one fused instruction on vector
// registers, as AVX2 code on ymm registers (8 lanes) or AVX-512 code on zmm registers (16 lanes).
// Each lane performs the IEEE operations the interpreter performs for its element, in the same
// order (no FMA contraction; max / min as scalar_ops.h's selects; erf as Scalar<kErf>; exp and
// logistic as vmath_avx2.cpp's blocks), so both widths give the interpreter's bits.
#pragma once
#include <xbyak/xbyak.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "exec/cpu/kernels/fusion_program.h"

namespace netspec::exec::cpu::fused {

// Constant vectors after the code, addressed from r11: lane indices first, then vectors of equal
// 32-bit or 64-bit lanes, one vector width (32 or 64 bytes) each.
class JitPool {
 public:
  explicit JitPool(int lanes) : lanes_(lanes) {}
  int of(float v);
  int of(double v);
  int of_bits(uint32_t bits) { return entry(bits, false); }
  int of_bits64(uint64_t bits) { return entry(bits, true); }
  static constexpr int kIota = 0;  // lanes 0..lanes-1 as int32
  void emit(Xbyak::CodeGenerator& g) const;

 private:
  int entry(uint64_t bits, bool wide);
  int lanes_;
  std::map<std::pair<uint64_t, bool>, int> index_;
  std::vector<std::pair<uint64_t, bool>> vecs_;
};

// A code generator that emits fused instructions over `lanes` (8 or 16) elements per vector.
// Register conventions: vector registers 10, 11, 13, 14, 15 are scratch; a masked (tail)
// vector's lanes are in ymm12 (8 lanes) or k1 (16 lanes); k2 is scratch for compares.
class VecGen : public Xbyak::CodeGenerator {
 protected:
  VecGen(size_t bytes, int lanes)
      : CodeGenerator(bytes, Xbyak::DontSetProtectRWE), lanes_(lanes), pool_(lanes) {}

  bool wide() const { return lanes_ == 16; }
  int vbytes() const { return lanes_ * 4; }
  // Vector register i at this width (zmm16-31 only at 16 lanes).
  Xbyak::Xmm vec(int i) const {
    return wide() ? Xbyak::Xmm(i, Xbyak::Operand::ZMM, 512)
                  : Xbyak::Xmm(i, Xbyak::Operand::YMM, 256);
  }
  // The lanes l < rcx - rdx (1 <= rcx - rdx < lanes) of the masked vectors that follow.
  void set_tail_mask();
  // A vector load / store; masked: only the tail's lanes are read (the others zero) or written.
  void load_vec(const Xbyak::Xmm& d, const Xbyak::Address& at, bool masked);
  void store_vec(const Xbyak::Address& at, const Xbyak::Xmm& s, bool masked);
  // The lanes of 8 consecutive floats at `at`, repeated over the vector (nChw8c channel blocks).
  void load_block8(const Xbyak::Xmm& d, const Xbyak::Address& at, bool masked);
  // d = the instruction's value of a, b, c (registers; d may be any of them).
  void emit_op(const Instr& in, const Xbyak::Xmm& d, const Xbyak::Xmm& a, const Xbyak::Xmm& b,
               const Xbyak::Xmm& c);
  // The constant pool, at `pool` (after the code's last instruction).
  void emit_pool(Xbyak::Label& pool);

 private:
  Xbyak::Address cst(float v) { return ptr[r11 + pool_.of(v)]; }
  Xbyak::Address cst_bits(uint32_t bits) { return ptr[r11 + pool_.of_bits(bits)]; }
  Xbyak::Address cst(double v) { return ptr[r11 + pool_.of(v)]; }
  Xbyak::Address cst_bits64(uint64_t bits) { return ptr[r11 + pool_.of_bits64(bits)]; }
  // d = mask ? b : a per lane, the mask from a compare (a vector on AVX2, k2 on AVX-512).
  void compare_blend(const Xbyak::Xmm& d, const Xbyak::Xmm& a, const Xbyak::Xmm& b,
                     const Xbyak::Xmm& x, const Xbyak::Operand& y, uint8_t pred);
  // d = (sign of s set) ? b : a per lane.
  void sign_blend(const Xbyak::Xmm& d, const Xbyak::Xmm& a, const Xbyak::Xmm& b,
                  const Xbyak::Xmm& s);
  void extremum(bool is_max, const Xbyak::Xmm& d, const Xbyak::Xmm& a, const Xbyak::Xmm& b);
  void exp(const Xbyak::Xmm& d, const Xbyak::Xmm& a);
  void logistic(const Xbyak::Xmm& d, const Xbyak::Xmm& a);

  int lanes_;
  JitPool pool_;
};

}  // namespace netspec::exec::cpu::fused
