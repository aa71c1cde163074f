// One fused instruction as AVX2 (8 lanes, ymm) or AVX-512 (16 lanes, zmm) code: the sequences
// are the same lane for lane; only masks differ in kind (AVX2: a vector of all-ones lanes and
// vblendvps / vmaskmovps; AVX-512: a k register, vblendmps and masked moves).
#include "exec/cpu/kernels/fusion_jit_ops.h"

#include <cstring>

#include "exec/erf_f32.h"

namespace netspec::exec::cpu::fused {

using namespace Xbyak;
using namespace Xbyak::util;

int JitPool::of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return of_bits(b);
}

int JitPool::of(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return of_bits64(b);
}

int JitPool::entry(uint64_t bits, bool wide) {
  const std::pair<uint64_t, bool> key{bits, wide};
  auto [it, fresh] = index_.try_emplace(key, static_cast<int>(vecs_.size()));
  if (fresh) vecs_.push_back(key);
  return (1 + it->second) * lanes_ * 4;  // after the lane indices
}

void JitPool::emit(CodeGenerator& g) const {
  for (uint32_t l = 0; l < static_cast<uint32_t>(lanes_); ++l) g.dd(l);
  for (const auto& [bits, wide] : vecs_)
    for (int l = 0; l < lanes_; ++l)
      g.dd(wide ? static_cast<uint32_t>(l % 2 ? bits >> 32 : bits) : static_cast<uint32_t>(bits));
}

void VecGen::set_tail_mask() {
  mov(rax, rcx);
  sub(rax, rdx);
  if (wide()) {  // k1 = (1 << n) - 1
    mov(r10d, 1);
    shlx(r10d, r10d, eax);
    sub(r10d, 1);
    kmovw(k1, r10d);
  } else {  // lane l all ones where l < n
    vmovd(Xmm(12), eax);
    vpbroadcastd(ymm12, Xmm(12));
    vpcmpgtd(ymm12, ymm12, ptr[r11 + JitPool::kIota]);
  }
}

void VecGen::load_vec(const Xmm& d, const Address& at, bool masked) {
  if (!masked)
    vmovups(d, at);
  else if (wide())
    vmovups(d | k1 | T_z, at);
  else
    vmaskmovps(d, ymm12, at);
}

void VecGen::store_vec(const Address& at, const Xmm& s, bool masked) {
  if (!masked)
    vmovups(at, s);
  else if (wide())
    vmovups(at | k1, s);
  else
    vmaskmovps(at, ymm12, s);
}

void VecGen::load_block8(const Xmm& d, const Address& at, bool masked) {
  if (wide())
    vbroadcastf32x8(Zmm(d.getIdx()), at);  // the 8 values are all there: no mask needed
  else
    load_vec(d, at, masked);
}

void VecGen::compare_blend(const Xmm& d, const Xmm& a, const Xmm& b, const Xmm& x,
                           const Operand& y, uint8_t pred) {
  if (wide()) {
    vcmpps(k2, x, y, pred);
    vblendmps(d | k2, a, b);
  } else {
    const Xmm m = vec(13);
    vcmpps(m, x, y, pred);
    vblendvps(d, a, b, m);
  }
}

void VecGen::sign_blend(const Xmm& d, const Xmm& a, const Xmm& b, const Xmm& s) {
  if (wide()) {
    vpmovd2m(k2, s);
    vblendmps(d | k2, a, b);
  } else {
    vblendvps(d, a, b, s);
  }
}

// scalar_ops.h's extremum: (a > b or a < b) ? a : b, then a == b picks by a's sign, then a
// NaN b, then a NaN a. d may be a or b; registers 13-15 are scratch.
void VecGen::extremum(bool is_max, const Xmm& d, const Xmm& a, const Xmm& b) {
  const Xmm t14 = vec(14), t15 = vec(15);
  compare_blend(t14, b, a, a, b, is_max ? 0x1e : 0x11);  // GT_OQ / LT_OQ
  if (is_max)
    sign_blend(t15, a, b, a);  // equal: sign of a set -> b
  else
    sign_blend(t15, b, a, a);  // equal: sign of a set -> a
  compare_blend(t14, t14, t15, a, b, 0x00);  // EQ_OQ
  compare_blend(t14, t14, b, b, b, 0x03);    // UNORD_Q
  compare_blend(d, t14, a, a, a, 0x03);
}

// vmath_avx2.cpp's exp_block on one vector: c = clamp(x, -104, 89) (a NaN lane -104), fn =
// round(c / ln2), r = c - fn·ln2 in two fmas, y = 1 + r + r²·P(r), then y·2^n: n added to
// y's exponent where every lane's result is a normal float, else y·2^n1·2^n2 (n = n1 + n2, the
// same bits) with NaN lanes x + x.
void VecGen::exp(const Xmm& d, const Xmm& a) {
  constexpr float kMagic = 12582912.f;  // 1.5·2^23
  const Xmm t11 = vec(11), t13 = vec(13), t14 = vec(14), t15 = vec(15);
  vmaxps(t13, a, cst(-104.f));
  vminps(t13, t13, cst(89.f));
  vmovups(t14, cst(kMagic));
  vfmadd231ps(t14, t13, cst(1.44269504088896341f));
  vsubps(t14, t14, cst(kMagic));  // fn
  vmovaps(t15, t13);
  vfmadd231ps(t15, t14, cst(-0.693359375f));
  vfmadd231ps(t15, t14, cst(2.12194440e-4f));  // r
  vmovups(t13, cst(1.9875691500e-4f));
  for (float k : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f,
                  5.0000001201e-1f})
    vfmadd213ps(t13, t15, cst(k));
  vmulps(t13, t13, t15);
  vfmadd213ps(t13, t15, t15);
  vaddps(t13, t13, cst(1.f));  // y
  vcvttps2dq(t14, t14);        // n
  // Every n in [-125, 127] (n + 125 in [0, 252] unsigned): y·2^n is a normal float, n added
  // to y's exponent field (exp_block's fast path; a NaN lane has n = -150 and goes below).
  Label slow, done;
  vpaddd(t11, t14, cst_bits(125));
  vpmaxud(t11, t11, cst_bits(252));
  if (wide()) {
    vpcmpeqd(k2, t11, cst_bits(252));
    kortestw(k2, k2);  // CF: every lane equal
    jnc(slow, T_NEAR);
  } else {
    vpcmpeqd(t11, t11, cst_bits(252));
    vmovmskps(eax, ymm11);
    cmp(eax, 0xff);
    jne(slow, T_NEAR);
  }
  vpslld(t11, t14, 23);
  vpaddd(d, t13, t11);
  jmp(done, T_NEAR);
  L(slow);
  vpsrad(t11, t14, 1);  // n1 = n >> 1, n2 = n - n1
  vpsubd(t14, t14, t11);
  vpaddd(t11, t11, cst_bits(127));
  vpslld(t11, t11, 23);
  vpaddd(t14, t14, cst_bits(127));
  vpslld(t14, t14, 23);
  vmulps(t13, t13, t11);
  vmulps(t13, t13, t14);
  vaddps(t15, a, a);
  if (wide()) {
    vcmpps(k2, a, a, 0x03);  // UNORD_Q
    vblendmps(d | k2, t13, t15);
  } else {
    vcmpps(t14, a, a, 0x03);
    vblendvps(d, t13, t15, t14);
  }
  L(done);
}

// vmath_avx2.cpp's logistic_block on one vector: 1 / (1 + e^-x), e^-x in double (clamped
// argument, x = n·ln2 + r, Taylor to r^10, times 2^n, one rounding to float) per half of the
// lanes, NaN lanes -x + -x. Registers 10, 11, 13-15 are scratch.
void VecGen::logistic(const Xmm& d, const Xmm& a) {
  constexpr double kMagic = 6755399441055744.0;  // 1.5·2^52
  const Xmm t10 = vec(10), t11 = vec(11), t13 = vec(13), t14 = vec(14), t15 = vec(15);
  // The half-width register of index i (a half's floats).
  auto half_reg = [&](int i) { return wide() ? Xmm(i, Operand::YMM, 256) : Xmm(i); };
  vxorps(t10, t10, t10);
  vsubps(t10, t10, a);  // -x
  vmaxps(t11, t10, cst(-104.f));
  vminps(t11, t11, cst(89.f));
  if (wide())
    vextractf32x8(half_reg(13), Zmm(11), 1);
  else
    vextractf128(half_reg(13), ymm11, 1);
  vcvtps2pd(t13, half_reg(13));  // the high half's argument
  vcvtps2pd(t11, half_reg(11));  // the low half's
  // Half h: argument xd in `x` (r replaces it), t and the scale in `t`, fn and p in `p`.
  auto half = [&](const Xmm& x, const Xmm& t, const Xmm& p) {
    vmovups(t, cst(kMagic));
    vfmadd231pd(t, x, cst(1.4426950408889634));
    vsubpd(p, t, cst(kMagic));
    vfmadd231pd(x, p, cst(-0.6931471805599453));  // r
    vmovups(p, cst(1.0 / 3628800.0));
    for (double k : {1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0,
                     1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0})
      vfmadd213pd(p, x, cst(k));
    vpsubq(t, t, cst(kMagic));  // n
    vpaddq(t, t, cst_bits64(1023));
    vpsllq(t, t, 52);
    vmulpd(p, p, t);
    vcvtpd2ps(half_reg(p.getIdx()), p);
  };
  half(t11, t14, t15);  // the low lanes in register 15's low half
  half(t13, t14, t11);  // the high lanes in register 11's low half
  if (wide())
    vinsertf32x8(Zmm(15), Zmm(15), half_reg(11), 1);
  else
    vinsertf128(ymm15, ymm15, Xmm(11), 1);
  vaddps(t14, t10, t10);
  compare_blend(t15, t15, t14, t10, t10, 0x03);  // UNORD_Q
  vaddps(t15, t15, cst(1.f));
  vmovups(t14, cst(1.f));
  vdivps(d, t14, t15);
}

void VecGen::emit_op(const Instr& in, const Xmm& d, const Xmm& a, const Xmm& b, const Xmm& c) {
  const Xmm t11 = vec(11), t13 = vec(13), t14 = vec(14), t15 = vec(15);
  switch (in.op) {
    case OpKind::kAdd: vaddps(d, a, b); break;
    case OpKind::kSubtract: vsubps(d, a, b); break;
    case OpKind::kMultiply: vmulps(d, a, b); break;
    case OpKind::kDivide: vdivps(d, a, b); break;
    case OpKind::kMaximum: extremum(true, d, a, b); break;
    case OpKind::kMinimum: extremum(false, d, a, b); break;
    case OpKind::kNegate: vxorps(d, a, cst_bits(0x80000000u)); break;
    case OpKind::kAbs: vandps(d, a, cst_bits(0x7fffffffu)); break;
    case OpKind::kSqrt: vsqrtps(d, a); break;
    case OpKind::kRsqrt:  // 1 / sqrt(x), two roundings as Scalar<kRsqrt>
      vsqrtps(t13, a);
      vmovups(t14, cst(1.f));
      vdivps(d, t14, t13);
      break;
    case OpKind::kNot:  // 1 - x on 0/1 floats
      vmovups(t13, cst(1.f));
      vsubps(d, t13, a);
      break;
    case OpKind::kAnd: vminps(d, a, b); break;  // 0/1 floats: min, max
    case OpKind::kOr: vmaxps(d, a, b); break;
    case OpKind::kConvert: vmovaps(d, a); break;
    case OpKind::kCompare: {
      static constexpr uint8_t kPred[] = {0x00, 0x04, 0x11, 0x12, 0x1e, 0x1d};  // EQ_OQ NEQ_UQ
      const uint8_t pred = kPred[static_cast<int>(in.dir)];  // LT_OQ LE_OQ GT_OQ GE_OQ
      if (wide()) {  // 1.0 where true, 0 elsewhere
        vcmpps(k2, a, b, pred);
        vmovups(d | k2 | T_z, cst(1.f));
      } else {
        vcmpps(t13, a, b, pred);
        vandps(d, t13, cst(1.f));
      }
      break;
    }
    case OpKind::kSelect:  // c != 0 ? x : y
      vxorps(t13, t13, t13);
      compare_blend(d, c, b, a, t13, 0x04);  // NEQ_UQ
      break;
    case OpKind::kClamp:  // min(max(x, lo), hi)
      extremum(true, t11, b, a);
      extremum(false, d, t11, c);
      break;
    case OpKind::kErf: {  // Scalar<kErf>: x clamped to [-4, 4] (NaN kept), x·P(x²) / Q(x²)
      vmovups(t14, cst(-4.f));
      vmaxps(t13, t14, a);  // a NaN second operand is returned
      vmovups(t14, cst(4.f));
      vminps(t13, t14, t13);
      vmulps(t14, t13, t13);
      vmovups(t15, cst(kErfP[0]));
      for (int k = 1; k < kErfPLen; ++k) vfmadd213ps(t15, t14, cst(kErfP[k]));
      vmovups(t11, cst(kErfQ[0]));
      for (int k = 1; k < kErfQLen; ++k) vfmadd213ps(t11, t14, cst(kErfQ[k]));
      vmulps(t15, t13, t15);
      vdivps(d, t15, t11);
      break;
    }
    case OpKind::kExponential: exp(d, a); break;
    case OpKind::kLogistic: logistic(d, a); break;
    default:
      throw Xbyak::Error(Xbyak::ERR_INTERNAL);
  }
}

void VecGen::emit_pool(Label& pool) {
  align(vbytes());
  L(pool);
  pool_.emit(*this);
}

}  // namespace netspec::exec::cpu::fused
