// Generated code for fused elementwise groups (fusion_program.h). The interpreter of fusion.cpp
// runs a group instruction by instruction over a tile of 512 elements, so every instruction loads
// and stores the tile through L1: on a Zen 1, which moves 256-bit vectors in halves, that is ~7
// cycles per element of the Adam update against ~2 for a compiled loop. Here each run of
// arithmetic instructions becomes one AVX2 loop over 8 elements at a time (two vectors
// interleaved) whose values live in ymm registers, written with Xbyak at plan time; broadcasts of
// one run are read in place. The rest of the tile (other broadcasts materialised into slots, i1
// loads, log / tanh / log1p by their vector kernels) stays interpreted, between the runs. Each
// generated instruction is the IEEE operation the interpreter performs (no FMA contraction:
// fusion.cpp is compiled -ffp-contract=off; max / min as scalar_ops.h's selects; erf as
// Scalar<kErf>; exp and logistic as vmath_avx2.cpp's blocks), so results are equal bit for bit.
// No software prefetch: a generated run streams its inputs once, in order.
#include <xbyak/xbyak.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>

#include "exec/cpu/kernels/fusion_program.h"
#include "exec/erf_f32.h"

namespace netspec::exec::cpu::fused {

// void fn(float* const* slots, const float* const* ins, int64_t off, int64_t end, int64_t* ctr):
// the run over elements [off, end) of the domain; slots are the tile's (element off at
// slots[s][0]), ins the whole inputs, ctr the positions of the broadcasts read in place.
using JitFn = void (*)(float* const*, const float* const*, int64_t, int64_t, int64_t*);

// A broadcast the generated runs read in place (BcastMap with one run): rows (inner 1, element i
// reads src[i % size]), runs (element i reads src[(i / inner) % size], inner a multiple of 16),
// or a channel vector in nChw8c (element i reads channel block (i / 8 / hw) % (size / 8), lane
// i % 8: runs of inner = 8·hw elements over blocks of 8 values). Its position at element j is
// ctr[2c] = the operand element (block), ctr[2c + 1] = j % inner.
struct InPlaceBcast {
  int instr = -1, input = -1;
  int64_t inner = 1, size = 1;  // size: operand elements (blocks, for channels)
  bool channels = false;
};

struct JitCode {
  struct Step {
    int instr = -1;      // an interpreted instruction (p.code index), or
    JitFn fn = nullptr;  // a generated run
  };
  std::vector<Step> steps;
  std::vector<InPlaceBcast> bcasts;  // tiles must start at multiples of 16 to use them
  std::vector<std::unique_ptr<Xbyak::CodeGenerator>> code;
};
constexpr size_t kMaxInPlace = 16;

bool fusion_jit_enabled() {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (const char* e = std::getenv("NETSPEC_FUSION_JIT"); e && *e)
    return avx2 && std::string_view(e) != "0";  // the code is AVX2 + FMA even when forced
  // On by default with AVX-512 too: 8-lane code that keeps a run's values in registers beat the
  // interpreter's 16-lane tiles through L1 on every peer net of an AMD Zen 5 (session 32: mlp,
  // mnist-cnn -7 %, vit-cifar-tiny -5 %, resnet18-cifar -3 %, resnet50 -2.5 %, mamba-lm -2 %).
  return avx2;
}

namespace {

using namespace Xbyak;
using namespace Xbyak::util;

bool is_i1_load(const Program& p, const Instr& in) {
  return in.op == OpKind::kConvert && in.a < 0 && p.in_is_i1[static_cast<size_t>(-in.a - 1)];
}

// Instructions a generated run holds: the arithmetic, compares, selects and erf. Broadcasts, i1
// loads and the other transcendentals stay interpreted.
bool generated(const Program& p, const Instr& in) {
  switch (in.op) {
    case OpKind::kAdd: case OpKind::kSubtract: case OpKind::kMultiply: case OpKind::kDivide:
    case OpKind::kMaximum: case OpKind::kMinimum: case OpKind::kNegate: case OpKind::kAbs:
    case OpKind::kSqrt: case OpKind::kRsqrt: case OpKind::kErf: case OpKind::kCompare:
    case OpKind::kSelect: case OpKind::kClamp: case OpKind::kAnd: case OpKind::kOr:
    case OpKind::kNot:
      return true;
    case OpKind::kConvert:
      return !is_i1_load(p, in);
    // vmath's exp and logistic sequences (vmath_impl.h: the same element-wise code, so the same
    // bits, in its AVX2 and AVX-512 builds); not where the interpreter runs the scalar ones.
    // With AVX-512 too since session 34: an exp no longer splits a run in two around an
    // interpreted tile pass (mamba-lm's scan groups: its step -10 % on the Zen 5).
    case OpKind::kExponential:
    case OpKind::kLogistic:
      return std::string_view(vec_math_isa()) != "scalar";
    default:
      return false;
  }
}

int operand_count(const Instr& in) {
  if (in.op == OpKind::kSelect || in.op == OpKind::kClamp) return 3;
  switch (in.op) {
    case OpKind::kNegate: case OpKind::kAbs: case OpKind::kSqrt: case OpKind::kRsqrt:
    case OpKind::kErf: case OpKind::kNot: case OpKind::kConvert: case OpKind::kExponential:
    case OpKind::kExponentialMinusOne: case OpKind::kLog: case OpKind::kLogPlusOne:
    case OpKind::kLogistic: case OpKind::kTanh: case OpKind::kBroadcastInDim:
      return 1;
    default:
      return 2;
  }
}

// Broadcasts and i1 loads read only the group's inputs: each gets a slot of its own and moves to
// the front of the program, so the arithmetic after them forms longer generated runs.
void hoist_loads(Program& p) {
  std::vector<Instr> front, rest;
  for (size_t k = 0; k < p.code.size(); ++k) {
    Instr in = p.code[k];
    const bool bcast = in.op == OpKind::kBroadcastInDim;
    if (!bcast && !is_i1_load(p, in)) {
      rest.push_back(in);
      continue;
    }
    if (!(bcast && in.map.size == 1)) {  // pinned scalars have slots of their own already
      const int old = in.dst, fresh = p.slots++;
      in.dst = fresh;
      for (size_t r = k + 1; r < p.code.size(); ++r) {  // its readers, up to the next write
        Instr& x = p.code[r];
        for (int* ref : {&x.a, &x.b, &x.c})
          if (*ref == old) *ref = fresh;
        if (x.dst == old) break;
      }
    }
    front.push_back(in);
  }
  p.code = std::move(front);
  p.code.insert(p.code.end(), rest.begin(), rest.end());
  // The reads of each input moved: last_read again from the final order.
  p.last_read.assign(p.last_read.size(), -1);
  for (size_t i = 0; i < p.code.size(); ++i) {
    const Instr& in = p.code[i];
    const int refs[3] = {in.a, in.b, in.c};
    for (int j = 0; j < operand_count(in); ++j)
      if (refs[j] < 0) p.last_read[static_cast<size_t>(-refs[j] - 1)] = static_cast<int>(i);
  }
}

// Is slot s read after instruction e - 1 before it is written again (or a group output)?
bool slot_live_after(const Program& p, size_t e, int s) {
  for (size_t k = e; k < p.code.size(); ++k) {
    const Instr& in = p.code[k];
    const int refs[3] = {in.a, in.b, in.c};
    for (int j = 0; j < operand_count(in); ++j)
      if (refs[j] == s) return true;
    if (in.dst == s) return false;
  }
  for (const auto& [slot, is_i1] : p.outs)
    if (slot == s) return true;
  return false;
}

// Constant vectors after the code, addressed from r11: lane indices first, then 32-byte
// vectors of 8 equal 32-bit or 4 equal 64-bit lanes.
class Pool {
 public:
  int of(float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return of_bits(b);
  }
  int of_bits(uint32_t bits) { return entry(bits); }
  int of(double v) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return of_bits64(b);
  }
  int of_bits64(uint64_t bits) { return entry(bits, true); }
  static constexpr int kIota = 0;  // lanes 0..7 as int32
  void emit(CodeGenerator& g) const {
    for (uint32_t l = 0; l < 8; ++l) g.dd(l);
    for (const auto& [bits, wide] : vecs_)
      for (int l = 0; l < 8; ++l)
        g.dd(wide ? static_cast<uint32_t>(l % 2 ? bits >> 32 : bits) : static_cast<uint32_t>(bits));
  }

 private:
  int entry(uint64_t bits, bool wide = false) {
    const std::pair<uint64_t, bool> key{bits, wide};
    auto [it, fresh] = index_.try_emplace(key, static_cast<int>(vecs_.size()));
    if (fresh) vecs_.push_back(key);
    return 32 + it->second * 32;
  }
  std::map<std::pair<uint64_t, bool>, int> index_;
  std::vector<std::pair<uint64_t, bool>> vecs_;
};

// One generated run: instructions [b, e) of p over 8 elements at a time (a masked last vector).
// Values live in ymm0-9 (ymm10, 11, 13-15 are scratch, ymm12 the tail's mask); a value evicted for
// lack of registers goes to its slot and is loaded again where read. Values read after the run
// are stored to their slots as they are computed.
class RunGen : public CodeGenerator {
 public:
  RunGen(const Program& p, size_t b, size_t e, const std::vector<InPlaceBcast>& bcasts)
      : CodeGenerator(8192 + (e - b) * 2048, DontSetProtectRWE),
        p_(p),
        b_(b),
        e_(e),
        bcasts_(bcasts) {
    analyse();
    generate();
    ready();
    setProtectModeRE();
  }
  JitFn fn() const { return getCode<JitFn>(); }

 private:
  enum class Kind { kDef, kSlot, kExt, kPin, kBcast };
  struct Val {
    Kind kind;
    int idx;  // kDef: instruction; kSlot / kPin: slot; kExt: input; kBcast: bcasts_ index
    std::vector<size_t> uses;
    bool live_out = false;
  };
  static constexpr int kRegs = 10;

  // Values and their uses; each operand of each instruction names one.
  void analyse() {
    std::map<int, int> cur, ext, pin;  // slot -> its current value; input -> value; pinned
    opv_.assign(e_ - b_, {-1, -1, -1});
    defv_.assign(e_ - b_, -1);
    auto add = [&](Kind k, int idx) {
      vals_.push_back({k, idx, {}, false});
      return static_cast<int>(vals_.size()) - 1;
    };
    for (size_t i = b_; i < e_; ++i) {
      const Instr& in = p_.code[i];
      const int refs[3] = {in.a, in.b, in.c};
      for (int j = 0; j < operand_count(in); ++j) {
        const int r = refs[j];
        int id;
        if (r < 0) {
          auto it = ext.find(-r - 1);
          id = it != ext.end() ? it->second : (ext[-r - 1] = add(Kind::kExt, -r - 1));
        } else if (std::find(p_.pinned.begin(), p_.pinned.end(), r) != p_.pinned.end()) {
          auto it = pin.find(r);
          id = it != pin.end() ? it->second : (pin[r] = add(Kind::kPin, r));
        } else if (int c = in_place(r); c >= 0 && !cur.count(r)) {
          id = cur[r] = add(Kind::kBcast, c);
        } else {
          auto it = cur.find(r);
          id = it != cur.end() ? it->second : (cur[r] = add(Kind::kSlot, r));
        }
        if (vals_[static_cast<size_t>(id)].uses.empty() ||
            vals_[static_cast<size_t>(id)].uses.back() != i)
          vals_[static_cast<size_t>(id)].uses.push_back(i);
        opv_[i - b_][static_cast<size_t>(j)] = id;
      }
      const int d = add(Kind::kDef, static_cast<int>(i));
      defv_[i - b_] = d;
      cur[in.dst] = d;
    }
    for (const auto& [slot, id] : cur)
      if (vals_[static_cast<size_t>(id)].kind == Kind::kDef)
        vals_[static_cast<size_t>(id)].live_out = slot_live_after(p_, e_, slot);
    // Pointer registers for the most used streams (slots and inputs read or written per vector).
    std::map<std::pair<bool, int>, int> count;  // (is input, index) -> accesses
    for (const Val& v : vals_) {
      if (v.kind == Kind::kPin) continue;
      const std::pair<bool, int> key = stream_of(v);
      count[key] += static_cast<int>(v.uses.size()) + (v.live_out ? 1 : 0);
    }
    std::vector<std::pair<int, std::pair<bool, int>>> order;
    for (const auto& [key, n] : count) order.push_back({-n, key});
    std::sort(order.begin(), order.end());
    const Reg64 gprs[] = {rbx, rbp, r9, r12, r13, r14, r15};
    for (size_t k = 0; k < order.size() && k < std::size(gprs); ++k)
      base_reg_[order[k].second] = gprs[k].getIdx();
  }

  // The in-place broadcast writing slot s (bcasts_ index), or -1.
  int in_place(int s) const {
    for (size_t c = 0; c < bcasts_.size(); ++c)
      if (p_.code[static_cast<size_t>(bcasts_[c].instr)].dst == s) return static_cast<int>(c);
    return -1;
  }

  std::pair<bool, int> stream_of(const Val& v) const {
    if (v.kind == Kind::kExt) return {true, v.idx};
    if (v.kind == Kind::kBcast) return {true, bcasts_[static_cast<size_t>(v.idx)].input};
    if (v.kind == Kind::kDef) return {false, p_.code[static_cast<size_t>(v.idx)].dst};
    return {false, v.idx};
  }

  // The base register of a stream (element j at [base + rdx * 4]); rax when it has none.
  Reg64 base(std::pair<bool, int> s) {
    auto it = base_reg_.find(s);
    if (it != base_reg_.end()) return Reg64(it->second);
    load_base(rax, s);
    return rax;
  }
  void load_base(const Reg64& r, std::pair<bool, int> s) {
    if (s.first) {
      mov(r, ptr[rsi + 8 * s.second]);
    } else {  // a tile slot holds element `off` at its start: its base is slot - off
      mov(r, ptr[rdi + 8 * s.second]);
      sub(r, qword[rsp]);
    }
  }

  void generate() {
    for (const Reg64& r : {rbx, rbp, r12, r13, r14, r15}) push(r);
    Label pool, pairs, single, tail, done;
    lea(r11, ptr[rip + pool]);
    lea(rax, ptr[rdx * 4]);  // rdx: the element index j, from off to end (rcx)
    push(rax);               // [rsp]: off * 4 (slot bases are slot - off)
    for (const auto& [s, r] : base_reg_) load_base(Reg64(r), s);
    // Two vectors at a time, their instructions interleaved: one vector's dependency chain
    // (exp's is ~20 deep) leaves Zen 1's scheduler idle; two side by side fill it.
    L(pairs);
    lea(rax, ptr[rdx + 16]);
    cmp(rax, rcx);
    jg(single, T_NEAR);
    vectors(2, false);
    advance(16);
    add(rdx, 16);
    jmp(pairs, T_NEAR);
    L(single);
    lea(rax, ptr[rdx + 8]);
    cmp(rax, rcx);
    jg(tail, T_NEAR);
    vectors(1, false);
    advance(8);
    add(rdx, 8);
    L(tail);
    cmp(rdx, rcx);
    jge(done, T_NEAR);
    mov(rax, rcx);  // lanes l < end - j
    sub(rax, rdx);
    vmovd(Xmm(12), eax);
    vpbroadcastd(ymm12, Xmm(12));
    vpcmpgtd(ymm12, ymm12, ptr[r11 + Pool::kIota]);
    vectors(1, true);
    L(done);
    vzeroupper();
    pop(rax);
    for (const Reg64& r : {r15, r14, r13, r12, rbp, rbx}) pop(r);
    ret();
    align(32);
    L(pool);
    pool_.emit(*this);
  }

  // Register allocation over "lane values": value id of vector u is id * U + u. Positions in
  // the interleaved order: instruction i of vector u is at i * U + u.
  Address elem(std::pair<bool, int> s, int u) { return ptr[base(s) + rdx * 4 + 32 * u]; }
  // Sizes and runs that are powers of two: the position is the element index shifted and masked
  // (a counter in memory carried from vector to vector cost mamba's scan groups 20 %).
  static bool pow2(const InPlaceBcast& bc) {
    return std::has_single_bit(static_cast<uint64_t>(bc.inner)) &&
           std::has_single_bit(static_cast<uint64_t>(bc.size));
  }

  // The in-place broadcasts' positions move on by `step` elements (tiles start at multiples of
  // 16, inner and row sizes are multiples of 16: a position wraps only at a step's end).
  void advance(int step) {
    for (size_t c = 0; c < bcasts_.size(); ++c) {
      const InPlaceBcast& bc = bcasts_[c];
      if (pow2(bc)) continue;  // its position is computed from j
      const Address q = qword[r8 + 16 * c], r = qword[r8 + 16 * c + 8];
      Label next;
      if (bc.inner == 1) {
        add(q, step);
        cmp(q, static_cast<uint32_t>(bc.size));
        jne(next);
        mov(q, 0);
      } else {
        add(r, step);
        cmp(r, static_cast<uint32_t>(bc.inner));
        jne(next);
        mov(r, 0);
        add(q, 1);
        cmp(q, static_cast<uint32_t>(bc.size));
        jne(next);
        mov(q, 0);
      }
      L(next);
    }
  }

  void load(const Ymm& y, int lv) {
    const Val& v = vals_[static_cast<size_t>(lv / u_count_)];
    const int u = lv % u_count_;
    if (v.kind == Kind::kBcast) {  // rows: 8 operand elements from q on; runs: element q;
      const InPlaceBcast& bc = bcasts_[static_cast<size_t>(v.idx)];  // channels: block q
      if (pow2(bc)) {  // q = (j / inner) % size by a shift and a mask, no counter to carry
        mov(r10, rdx);
        if (bc.inner > 1) shr(r10, std::countr_zero(static_cast<uint64_t>(bc.inner)));
        and_(r10, static_cast<uint32_t>(bc.size - 1));
      } else {
        mov(r10, qword[r8 + 16 * v.idx]);
      }
      const Reg64 src = base(stream_of(v));
      if (bc.channels) {
        shl(r10, 5);
        if (masked_)
          vmaskmovps(y, ymm12, ptr[src + r10]);
        else
          vmovups(y, ptr[src + r10]);
      } else if (bc.inner > 1)
        vbroadcastss(y, dword[src + r10 * 4]);
      else if (masked_)
        vmaskmovps(y, ymm12, ptr[src + r10 * 4 + 32 * u]);
      else
        vmovups(y, ptr[src + r10 * 4 + 32 * u]);
      return;
    }
    if (v.kind == Kind::kPin) {
      mov(rax, ptr[rdi + 8 * v.idx]);
      vbroadcastss(y, dword[rax]);
    } else if (masked_) {
      vmaskmovps(y, ymm12, elem(stream_of(v), lv % u_count_));
    } else {
      vmovups(y, elem(stream_of(v), lv % u_count_));
    }
  }
  void store(int lv, const Ymm& y) {
    const Address at = elem(stream_of(vals_[static_cast<size_t>(lv / u_count_)]), lv % u_count_);
    if (masked_)
      vmaskmovps(at, ymm12, y);
    else
      vmovups(at, y);
    stored_[static_cast<size_t>(lv)] = true;
  }

  // The next position after pos that reads lane value lv (SIZE_MAX: none).
  size_t next_use(int lv, size_t pos) const {
    const size_t u = static_cast<size_t>(lv % u_count_);
    for (size_t i : vals_[static_cast<size_t>(lv / u_count_)].uses)
      if (i * u_count_ + u > pos) return i * u_count_ + u;
    return SIZE_MAX;
  }
  // A free register, evicting the lane value read furthest ahead (stored first when it exists
  // nowhere else) when none is free.
  int alloc(size_t pos) {
    for (int r = 0; r < kRegs; ++r)
      if (owner_[static_cast<size_t>(r)] < 0) return r;
    int victim = -1;
    size_t far = 0;
    for (int r = 0; r < kRegs; ++r) {
      const int lv = owner_[static_cast<size_t>(r)];
      if (std::find(locked_.begin(), locked_.end(), lv) != locked_.end()) continue;
      const size_t nu = next_use(lv, pos);
      if (victim < 0 || nu > far) victim = r, far = nu;
    }
    const int lv = owner_[static_cast<size_t>(victim)];
    if (vals_[static_cast<size_t>(lv / u_count_)].kind == Kind::kDef &&
        !stored_[static_cast<size_t>(lv)])
      store(lv, Ymm(victim));
    reg_of_[static_cast<size_t>(lv)] = -1;
    owner_[static_cast<size_t>(victim)] = -1;
    return victim;
  }
  Ymm get(int lv, size_t pos) {
    int r = reg_of_[static_cast<size_t>(lv)];
    if (r < 0) {
      r = alloc(pos);
      load(Ymm(r), lv);
      reg_of_[static_cast<size_t>(lv)] = r;
      owner_[static_cast<size_t>(r)] = lv;
    }
    locked_.push_back(lv);
    return Ymm(r);
  }
  void release(int lv) {
    const int r = reg_of_[static_cast<size_t>(lv)];
    if (r >= 0) owner_[static_cast<size_t>(r)] = -1;
    reg_of_[static_cast<size_t>(lv)] = -1;
  }

  // U vectors of the run at j, j + 8, ... (masked: one, the last, partial vector).
  void vectors(int U, bool masked) {
    masked_ = masked;
    u_count_ = U;
    reg_of_.assign(vals_.size() * static_cast<size_t>(U), -1);
    stored_.assign(vals_.size() * static_cast<size_t>(U), false);
    owner_.fill(-1);
    for (size_t i = b_; i < e_; ++i)
      for (int u = 0; u < U; ++u) {
        const size_t pos = i * static_cast<size_t>(U) + static_cast<size_t>(u);
        const Instr& in = p_.code[i];
        locked_.clear();
        Ymm y[3] = {ymm11, ymm11, ymm11};
        const int n = operand_count(in);
        int lvs[3] = {-1, -1, -1};
        for (int j = 0; j < n; ++j) {
          lvs[j] = opv_[i - b_][static_cast<size_t>(j)] * U + u;
          y[j] = get(lvs[j], pos);
        }
        for (int j = 0; j < n; ++j)  // operands read last here free their registers
          if (next_use(lvs[j], pos) == SIZE_MAX) release(lvs[j]);
        locked_.clear();
        const int d = alloc(pos);
        emit(in, Ymm(d), y[0], y[1], y[2]);
        const int lv = defv_[i - b_] * U + u;
        const Val& v = vals_[static_cast<size_t>(defv_[i - b_])];
        if (v.live_out) store(lv, Ymm(d));
        if (!v.uses.empty()) {
          reg_of_[static_cast<size_t>(lv)] = d;
          owner_[static_cast<size_t>(d)] = lv;
        }
      }
  }

  Address cst(float v) { return ptr[r11 + pool_.of(v)]; }

  // scalar_ops.h's extremum: (a > b or a < b) ? a : b, then a == b picks by a's sign, then a
  // NaN b, then a NaN a. d may be a or b; ymm13-15 are scratch.
  void extremum(bool is_max, const Ymm& d, const Ymm& a, const Ymm& b) {
    vcmpps(ymm13, a, b, is_max ? 0x1e : 0x11);  // GT_OQ / LT_OQ
    vblendvps(ymm14, b, a, ymm13);
    if (is_max)
      vblendvps(ymm15, a, b, a);  // equal: sign of a set -> b
    else
      vblendvps(ymm15, b, a, a);  // equal: sign of a set -> a
    vcmpps(ymm13, a, b, 0x00);    // EQ_OQ
    vblendvps(ymm14, ymm14, ymm15, ymm13);
    vcmpps(ymm13, b, b, 0x03);  // UNORD_Q
    vblendvps(ymm14, ymm14, b, ymm13);
    vcmpps(ymm13, a, a, 0x03);
    vblendvps(d, ymm14, a, ymm13);
  }

  Address cst_bits(uint32_t bits) { return ptr[r11 + pool_.of_bits(bits)]; }

  // vmath_avx2.cpp's exp_block on one vector: c = clamp(x, -104, 89) (a NaN lane -104), fn =
  // round(c / ln2), r = c - fn·ln2 in two fmas, y = 1 + r + r²·P(r), then y·2^n: n added to
  // y's exponent where every lane's result is a normal float, else y·2^n1·2^n2 (n = n1 + n2, the
  // same bits) with NaN lanes x + x.
  void exp(const Ymm& d, const Ymm& a) {
    constexpr float kMagic = 12582912.f;  // 1.5·2^23
    vmaxps(ymm13, a, cst(-104.f));
    vminps(ymm13, ymm13, cst(89.f));
    vmovups(ymm14, cst(kMagic));
    vfmadd231ps(ymm14, ymm13, cst(1.44269504088896341f));
    vsubps(ymm14, ymm14, cst(kMagic));  // fn
    vmovaps(ymm15, ymm13);
    vfmadd231ps(ymm15, ymm14, cst(-0.693359375f));
    vfmadd231ps(ymm15, ymm14, cst(2.12194440e-4f));  // r
    vmovups(ymm13, cst(1.9875691500e-4f));
    for (float k : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f,
                    5.0000001201e-1f})
      vfmadd213ps(ymm13, ymm15, cst(k));
    vmulps(ymm13, ymm13, ymm15);
    vfmadd213ps(ymm13, ymm15, ymm15);
    vaddps(ymm13, ymm13, cst(1.f));  // y
    vcvttps2dq(ymm14, ymm14);        // n
    // Every n in [-125, 127] (n + 125 in [0, 252] unsigned): y·2^n is a normal float, n added
    // to y's exponent field (exp_block's fast path; a NaN lane has n = -150 and goes below).
    Label slow, done;
    vpaddd(ymm11, ymm14, cst_bits(125));
    vpmaxud(ymm11, ymm11, cst_bits(252));
    vpcmpeqd(ymm11, ymm11, cst_bits(252));
    vmovmskps(eax, ymm11);
    cmp(eax, 0xff);
    jne(slow, T_NEAR);
    vpslld(ymm11, ymm14, 23);
    vpaddd(d, ymm13, ymm11);
    jmp(done, T_NEAR);
    L(slow);
    vpsrad(ymm11, ymm14, 1);  // n1 = n >> 1, n2 = n - n1
    vpsubd(ymm14, ymm14, ymm11);
    vpaddd(ymm11, ymm11, cst_bits(127));
    vpslld(ymm11, ymm11, 23);
    vpaddd(ymm14, ymm14, cst_bits(127));
    vpslld(ymm14, ymm14, 23);
    vmulps(ymm13, ymm13, ymm11);
    vmulps(ymm13, ymm13, ymm14);
    vaddps(ymm15, a, a);
    vcmpps(ymm14, a, a, 0x03);  // UNORD_Q
    vblendvps(d, ymm13, ymm15, ymm14);
    L(done);
  }

  // vmath_avx2.cpp's logistic_block on one vector: 1 / (1 + e^-x), e^-x in double (clamped
  // argument, x = n·ln2 + r, Taylor to r^10, times 2^n, one rounding to float) per half of 4
  // lanes, NaN lanes -x + -x. ymm10, 11, 13-15 are scratch.
  void logistic(const Ymm& d, const Ymm& a) {
    constexpr double kMagic = 6755399441055744.0;  // 1.5·2^52
    vxorps(ymm10, ymm10, ymm10);
    vsubps(ymm10, ymm10, a);  // -x
    vmaxps(ymm11, ymm10, cst(-104.f));
    vminps(ymm11, ymm11, cst(89.f));
    vextractf128(Xmm(13), ymm11, 1);
    vcvtps2pd(ymm13, Xmm(13));  // the high half's argument
    vcvtps2pd(ymm11, Xmm(11));  // the low half's
    // Half h: argument xd in `x` (r replaces it), t and the scale in `t`, fn and p in `p`.
    auto half = [&](const Ymm& x, const Ymm& t, const Ymm& p) {
      vmovups(t, ptr[r11 + pool_.of(kMagic)]);
      vfmadd231pd(t, x, ptr[r11 + pool_.of(1.4426950408889634)]);
      vsubpd(p, t, ptr[r11 + pool_.of(kMagic)]);
      vfmadd231pd(x, p, ptr[r11 + pool_.of(-0.6931471805599453)]);  // r
      vmovups(p, ptr[r11 + pool_.of(1.0 / 3628800.0)]);
      for (double k : {1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0,
                       1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0})
        vfmadd213pd(p, x, ptr[r11 + pool_.of(k)]);
      vpsubq(t, t, ptr[r11 + pool_.of(kMagic)]);  // n
      vpaddq(t, t, ptr[r11 + pool_.of_bits64(1023)]);
      vpsllq(t, t, 52);
      vmulpd(p, p, t);
      vcvtpd2ps(Xmm(p.getIdx()), p);
    };
    half(ymm11, ymm14, ymm15);  // low 4 lanes in xmm15
    half(ymm13, ymm14, ymm11);  // high 4 lanes in xmm11
    vinsertf128(ymm15, ymm15, Xmm(11), 1);
    vaddps(ymm14, ymm10, ymm10);
    vcmpps(ymm13, ymm10, ymm10, 0x03);  // UNORD_Q
    vblendvps(ymm15, ymm15, ymm14, ymm13);
    vaddps(ymm15, ymm15, cst(1.f));
    vmovups(ymm14, cst(1.f));
    vdivps(d, ymm14, ymm15);
  }

  void emit(const Instr& in, const Ymm& d, const Ymm& a, const Ymm& b, const Ymm& c) {
    switch (in.op) {
      case OpKind::kAdd: vaddps(d, a, b); break;
      case OpKind::kSubtract: vsubps(d, a, b); break;
      case OpKind::kMultiply: vmulps(d, a, b); break;
      case OpKind::kDivide: vdivps(d, a, b); break;
      case OpKind::kMaximum: extremum(true, d, a, b); break;
      case OpKind::kMinimum: extremum(false, d, a, b); break;
      case OpKind::kNegate: vxorps(d, a, ptr[r11 + pool_.of_bits(0x80000000u)]); break;
      case OpKind::kAbs: vandps(d, a, ptr[r11 + pool_.of_bits(0x7fffffffu)]); break;
      case OpKind::kSqrt: vsqrtps(d, a); break;
      case OpKind::kRsqrt:  // 1 / sqrt(x), two roundings as Scalar<kRsqrt>
        vsqrtps(ymm13, a);
        vmovups(ymm14, cst(1.f));
        vdivps(d, ymm14, ymm13);
        break;
      case OpKind::kNot:  // 1 - x on 0/1 floats
        vmovups(ymm13, cst(1.f));
        vsubps(d, ymm13, a);
        break;
      case OpKind::kAnd: vminps(d, a, b); break;  // 0/1 floats: min, max
      case OpKind::kOr: vmaxps(d, a, b); break;
      case OpKind::kConvert: vmovaps(d, a); break;
      case OpKind::kCompare: {
        static constexpr uint8_t kPred[] = {0x00, 0x04, 0x11, 0x12, 0x1e, 0x1d};  // EQ_OQ NEQ_UQ
        vcmpps(ymm13, a, b, kPred[static_cast<int>(in.dir)]);  // LT_OQ LE_OQ GT_OQ GE_OQ
        vandps(d, ymm13, cst(1.f));
        break;
      }
      case OpKind::kSelect:  // c != 0 ? x : y
        vxorps(ymm13, ymm13, ymm13);
        vcmpps(ymm13, a, ymm13, 0x04);  // NEQ_UQ
        vblendvps(d, c, b, ymm13);
        break;
      case OpKind::kClamp:  // min(max(x, lo), hi)
        extremum(true, ymm11, b, a);
        extremum(false, d, ymm11, c);
        break;
      case OpKind::kErf: {  // Scalar<kErf>: x clamped to [-4, 4] (NaN kept), x·P(x²) / Q(x²)
        vmovups(ymm14, cst(-4.f));
        vmaxps(ymm13, ymm14, a);  // a NaN second operand is returned
        vmovups(ymm14, cst(4.f));
        vminps(ymm13, ymm14, ymm13);
        vmulps(ymm14, ymm13, ymm13);
        vmovups(ymm15, cst(kErfP[0]));
        for (int k = 1; k < kErfPLen; ++k) vfmadd213ps(ymm15, ymm14, cst(kErfP[k]));
        vmovups(ymm11, cst(kErfQ[0]));
        for (int k = 1; k < kErfQLen; ++k) vfmadd213ps(ymm11, ymm14, cst(kErfQ[k]));
        vmulps(ymm15, ymm13, ymm15);
        vdivps(d, ymm15, ymm11);
        break;
      }
      case OpKind::kExponential: exp(d, a); break;
      case OpKind::kLogistic: logistic(d, a); break;
      default:
        throw Xbyak::Error(Xbyak::ERR_INTERNAL);
    }
  }

  const Program& p_;
  size_t b_, e_;
  const std::vector<InPlaceBcast>& bcasts_;
  std::vector<Val> vals_;
  std::vector<std::array<int, 3>> opv_;
  std::vector<int> defv_;
  std::map<std::pair<bool, int>, int> base_reg_;
  Pool pool_;
  bool masked_ = false;
  int u_count_ = 1;
  std::vector<int> reg_of_;
  std::vector<bool> stored_;
  std::array<int, kRegs> owner_{};
  std::vector<int> locked_;
};

}  // namespace

bool compile_jit(Program& p) {
  Program q = p;
  hoist_loads(q);
  auto code = std::make_shared<JitCode>();
  // Broadcasts read only by generated instructions, with maps the runs read in place.
  for (size_t k = 0; k < q.code.size() && code->bcasts.size() < kMaxInPlace; ++k) {
    const Instr& in = q.code[k];
    if (in.op != OpKind::kBroadcastInDim) continue;
    const BcastMap& m = in.map;
    InPlaceBcast bc{static_cast<int>(k), -in.a - 1, m.inner, m.size, false};
    if (m.block == 8) bc = {bc.instr, bc.input, m.inner * 8, m.size / 8, true};
    if (m.size == 1 || (m.block > 0 && !bc.channels) || m.outer_inner > 0 ||
        bc.size >= (int64_t{1} << 31) || bc.inner >= (int64_t{1} << 31) ||
        !(bc.inner == 1 ? bc.size % 16 == 0 : bc.inner % 16 == 0))
      continue;
    bool only_generated = true;
    for (size_t r = k + 1; r < q.code.size(); ++r) {
      const Instr& x = q.code[r];
      const int refs[3] = {x.a, x.b, x.c};
      for (int j = 0; j < operand_count(x); ++j)
        if (refs[j] == in.dst && !generated(q, x)) only_generated = false;
    }
    for (const auto& [slot, is_i1] : q.outs)
      if (slot == in.dst) only_generated = false;
    if (only_generated) code->bcasts.push_back(bc);
  }
  auto is_in_place = [&](size_t k) {
    for (const InPlaceBcast& bc : code->bcasts)
      if (bc.instr == static_cast<int>(k)) return true;
    return false;
  };
  int count = 0;
  try {
    for (size_t i = 0; i < q.code.size();) {
      if (!generated(q, q.code[i])) {
        if (!is_in_place(i)) code->steps.push_back({static_cast<int>(i), nullptr});
        ++i;
        continue;
      }
      size_t e = i;
      while (e < q.code.size() && generated(q, q.code[e])) ++e;
      auto g = std::make_unique<RunGen>(q, i, e, code->bcasts);
      code->steps.push_back({-1, g->fn()});
      code->code.push_back(std::move(g));
      count += static_cast<int>(e - i);
      i = e;
    }
  } catch (const Xbyak::Error&) {
    return false;  // no executable memory, or a run too long for its buffer: interpret
  }
  if (count == 0) return false;
  q.folded = static_cast<int>(code->bcasts.size());  // broadcasts read in place, as fold_broadcasts'
  q.jit = std::move(code);
  q.generated = count;
  p = std::move(q);
  return true;
}

void run_jit_tile(const Program& p, const RunArgs& args, const std::vector<const float*>& in_f,
                  float* const* slot_ptr, int64_t off, int64_t n, bool& pinned_done) {
  const JitCode& jit = *p.jit;
  if (!jit.bcasts.empty() && off % 16 != 0) {
    // In-place broadcasts need tiles at multiples of 16 (row folds over rows of another
    // length): interpret the tile; every instruction, broadcasts included, is still in p.code.
    for (const Instr& in : p.code) {
      if (pinned_done && in.op == OpKind::kBroadcastInDim && in.map.size == 1) continue;
      run_instr(p, in, args, in_f, slot_ptr, off, n);
    }
    pinned_done = true;
    return;
  }
  int64_t ctr[2 * kMaxInPlace];
  for (size_t c = 0; c < jit.bcasts.size(); ++c) {
    const InPlaceBcast& bc = jit.bcasts[c];
    ctr[2 * c] = (off / bc.inner) % bc.size;
    ctr[2 * c + 1] = off % bc.inner;
  }
  for (const JitCode::Step& s : jit.steps) {
    if (s.fn) {  // each run moves its own copy of the positions along
      int64_t pos[2 * kMaxInPlace];
      std::copy_n(ctr, 2 * jit.bcasts.size(), pos);
      s.fn(slot_ptr, in_f.data(), off, off + n, pos);
      continue;
    }
    const Instr& in = p.code[static_cast<size_t>(s.instr)];
    if (pinned_done && in.op == OpKind::kBroadcastInDim && in.map.size == 1) continue;
    run_instr(p, in, args, in_f, slot_ptr, off, n);
  }
  pinned_done = true;
}

}  // namespace netspec::exec::cpu::fused
