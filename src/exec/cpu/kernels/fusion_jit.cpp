// Generated code for fused elementwise groups (fusion_program.h). The interpreter of fusion.cpp
// runs a group instruction by instruction over a tile of 512 elements, so every instruction loads
// and stores the tile through L1: on a Zen 1, which moves 256-bit vectors in halves, that is ~7
// cycles per element of the Adam update against ~2 for a compiled loop. Here each run of
// arithmetic instructions becomes one loop, written with Xbyak at plan time, whose values live in
// vector registers: AVX2 over 8 elements at a time (two vectors interleaved), or AVX-512 over 16
// where oneDNN's ISA has avx512_core (NETSPEC_FUSION_JIT_LANES=8 keeps 8). Broadcasts of one run
// are read in place. The rest of the tile (other broadcasts materialised into slots, i1 loads,
// log / tanh / log1p by their vector kernels) stays interpreted, between the runs. Each
// generated instruction is the IEEE operation the interpreter performs (fusion_jit_ops.cpp), so
// results are equal bit for bit. No software prefetch: a run streams its inputs once, in order.
#include <xbyak/xbyak.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <map>
#include <string_view>

#include "exec/cpu/dnnl_util.h"
#include "exec/cpu/kernels/fusion_jit_ops.h"
#include "exec/cpu/kernels/fusion_program.h"

namespace netspec::exec::cpu::fused {

// void fn(float* const* slots, const float* const* ins, int64_t off, int64_t end, int64_t* ctr):
// the run over elements [off, end) of the domain; slots are the tile's (element off at
// slots[s][0]), ins the whole inputs, ctr the positions of the broadcasts read in place.
using JitFn = void (*)(float* const*, const float* const*, int64_t, int64_t, int64_t*);

// A broadcast the generated runs read in place (BcastMap with one run): rows (inner 1, element i
// reads src[i % size]), runs (element i reads src[(i / inner) % size], inner a multiple of 16),
// or a channel vector in nChwBc, B = 8 or 16 (element i reads channel block (i / B / hw) %
// (size / B), lane i % B: runs of inner = B·hw elements over blocks of B values; rows of B within
// outer stretches, below, are read the same way).
// Its position at element j is ctr[2c] = the operand element (block), ctr[2c + 1] = j % inner.
struct InPlaceBcast {
  int instr = -1, input = -1;
  int64_t inner = 1, size = 1;  // size: operand elements (blocks, for channels)
  int channels = 0;             // B for a channel vector
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

int fusion_jit_lanes() {
  const char* e = std::getenv("NETSPEC_FUSION_JIT_LANES");
  if (e && std::string_view(e) == "8") return 8;
  return onednn_has_isa(dnnl::cpu_isa::avx512_core) ? 16 : 8;
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

// One generated run: instructions [b, e) of p over `lanes` (8 or 16) elements at a time (a
// masked last vector). Values live in vector registers 0-9 (and 16-31 with 16 lanes; 10, 11,
// 13-15 are scratch, 12 the 8-lane tail's mask); a value evicted for lack of registers goes to
// its slot and is loaded again where read. Values read after the run are stored to their slots
// as they are computed.
class RunGen : public VecGen {
 public:
  RunGen(const Program& p, size_t b, size_t e, const std::vector<InPlaceBcast>& bcasts,
         int lanes)
      : VecGen(8192 + (e - b) * 2048 * (lanes / 8), lanes),
        p_(p),
        b_(b),
        e_(e),
        bcasts_(bcasts) {
    for (int r = 0; r < 10; ++r) regs_.push_back(r);
    if (wide())  // AVX-512's 16 more registers (EVEX-only: every 16-lane instruction is EVEX)
      for (int r = 16; r < 32; ++r) regs_.push_back(r);
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
    // 8 lanes: two vectors at a time, their instructions interleaved: one vector's dependency
    // chain (exp's is ~20 deep) leaves Zen 1's scheduler idle; two side by side fill it. 16
    // lanes: one vector a step (16 elements, the step the in-place broadcasts' grid allows).
    const int lanes = vbytes() / 4;
    if (!wide()) {
      L(pairs);
      lea(rax, ptr[rdx + 16]);
      cmp(rax, rcx);
      jg(single, T_NEAR);
      vectors(2, false);
      advance(16);
      add(rdx, 16);
      jmp(pairs, T_NEAR);
    }
    L(single);
    lea(rax, ptr[rdx + lanes]);
    cmp(rax, rcx);
    jg(tail, T_NEAR);
    vectors(1, false);
    advance(lanes);
    add(rdx, lanes);
    if (wide()) jmp(single, T_NEAR);
    L(tail);
    cmp(rdx, rcx);
    jge(done, T_NEAR);
    set_tail_mask();  // lanes l < end - j
    vectors(1, true);
    L(done);
    vzeroupper();
    pop(rax);
    for (const Reg64& r : {r15, r14, r13, r12, rbp, rbx}) pop(r);
    ret();
    emit_pool(pool);
  }

  // Register allocation over "lane values": value id of vector u is id * U + u. Positions in
  // the interleaved order: instruction i of vector u is at i * U + u.
  Address elem(std::pair<bool, int> s, int u) {
    return ptr[base(s) + rdx * 4 + vbytes() * u];
  }
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

  void load(const Xmm& y, int lv) {
    const Val& v = vals_[static_cast<size_t>(lv / u_count_)];
    const int u = lv % u_count_;
    if (v.kind == Kind::kBcast) {  // rows: a vector of operand elements from q on; runs:
      const InPlaceBcast& bc = bcasts_[static_cast<size_t>(v.idx)];  // element q; channels:
      // block q (B = 8 at 16 lanes: its 8 values twice; B = 16 at 8 lanes: the half at
      // (j + 8u) % 16; inner a multiple of 16 keeps a vector in one block)
      if (pow2(bc)) {  // q = (j / inner) % size by a shift and a mask, no counter to carry
        mov(r10, rdx);
        if (bc.inner > 1) shr(r10, std::countr_zero(static_cast<uint64_t>(bc.inner)));
        and_(r10, static_cast<uint32_t>(bc.size - 1));
      } else {
        mov(r10, qword[r8 + 16 * v.idx]);
      }
      if (bc.channels == 16) {
        shl(r10, 6);
        if (!wide()) {  // r10 += ((j + 8u) % 16) · 4 bytes (rax: before base() may claim it)
          lea(rax, ptr[rdx + 8 * u]);
          and_(rax, 15);
          lea(r10, ptr[r10 + rax * 4]);
        }
      }
      const Reg64 src = base(stream_of(v));
      if (bc.channels == 16) {  // the block is the vector, or holds it: all there, no mask
        vmovups(y, ptr[src + r10]);
      } else if (bc.channels) {
        shl(r10, 5);
        load_block8(y, ptr[src + r10], masked_);
      } else if (bc.inner > 1) {
        vbroadcastss(y, dword[src + r10 * 4]);
      } else {
        load_vec(y, ptr[src + r10 * 4 + vbytes() * u], masked_);
      }
      return;
    }
    if (v.kind == Kind::kPin) {
      mov(rax, ptr[rdi + 8 * v.idx]);
      vbroadcastss(y, dword[rax]);
    } else {
      load_vec(y, elem(stream_of(v), lv % u_count_), masked_);
    }
  }
  void store(int lv, const Xmm& y) {
    const Address at = elem(stream_of(vals_[static_cast<size_t>(lv / u_count_)]), lv % u_count_);
    store_vec(at, y, masked_);
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
    for (int r : regs_)
      if (owner_[static_cast<size_t>(r)] < 0) return r;
    int victim = -1;
    size_t far = 0;
    for (int r : regs_) {
      const int lv = owner_[static_cast<size_t>(r)];
      if (std::find(locked_.begin(), locked_.end(), lv) != locked_.end()) continue;
      const size_t nu = next_use(lv, pos);
      if (victim < 0 || nu > far) victim = r, far = nu;
    }
    const int lv = owner_[static_cast<size_t>(victim)];
    if (vals_[static_cast<size_t>(lv / u_count_)].kind == Kind::kDef &&
        !stored_[static_cast<size_t>(lv)])
      store(lv, vec(victim));
    reg_of_[static_cast<size_t>(lv)] = -1;
    owner_[static_cast<size_t>(victim)] = -1;
    return victim;
  }
  Xmm get(int lv, size_t pos) {
    int r = reg_of_[static_cast<size_t>(lv)];
    if (r < 0) {
      r = alloc(pos);
      load(vec(r), lv);
      reg_of_[static_cast<size_t>(lv)] = r;
      owner_[static_cast<size_t>(r)] = lv;
    }
    locked_.push_back(lv);
    return vec(r);
  }
  void release(int lv) {
    const int r = reg_of_[static_cast<size_t>(lv)];
    if (r >= 0) owner_[static_cast<size_t>(r)] = -1;
    reg_of_[static_cast<size_t>(lv)] = -1;
  }

  // U vectors of the run at j, j + lanes, ... (masked: one, the last, partial vector).
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
        Xmm y[3] = {vec(11), vec(11), vec(11)};
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
        emit_op(in, vec(d), y[0], y[1], y[2]);
        const int lv = defv_[i - b_] * U + u;
        const Val& v = vals_[static_cast<size_t>(defv_[i - b_])];
        if (v.live_out) store(lv, vec(d));
        if (!v.uses.empty()) {
          reg_of_[static_cast<size_t>(lv)] = d;
          owner_[static_cast<size_t>(d)] = lv;
        }
      }
  }

  const Program& p_;
  size_t b_, e_;
  const std::vector<InPlaceBcast>& bcasts_;
  std::vector<Val> vals_;
  std::vector<std::array<int, 3>> opv_;
  std::vector<int> defv_;
  std::map<std::pair<bool, int>, int> base_reg_;
  bool masked_ = false;
  int u_count_ = 1;
  std::vector<int> reg_of_;
  std::vector<bool> stored_;
  std::vector<int> regs_;            // the registers values may live in
  std::array<int, 32> owner_{};      // register -> its lane value, or -1
  std::vector<int> locked_;
};

}  // namespace

bool compile_jit(Program& p) {
  Program q = p;
  hoist_loads(q);
  auto code = std::make_shared<JitCode>();
  const int lanes = fusion_jit_lanes();
  // Broadcasts read only by generated instructions, with maps the runs read in place.
  for (size_t k = 0; k < q.code.size() && code->bcasts.size() < kMaxInPlace; ++k) {
    const Instr& in = q.code[k];
    if (in.op != OpKind::kBroadcastInDim) continue;
    const BcastMap& m = in.map;
    InPlaceBcast bc{static_cast<int>(k), -in.a - 1, m.inner, m.size, 0};
    if (m.block == 8 || m.block == 16)
      bc = {bc.instr, bc.input, m.inner * m.block, m.size / m.block, static_cast<int>(m.block)};
    // Rows of 8 or 16 repeated within each outer stretch (mamba's B_t, C_t [B, N] over
    // [B, di, N]): element i reads src[((i / oi) % os)·size + i % size], a block of 8 or 16
    // values per stretch, read as channel blocks are.
    else if (m.block == 0 && m.outer_inner > 0 && m.inner == 1 && (m.size == 8 || m.size == 16))
      bc = {bc.instr, bc.input, m.outer_inner, m.outer_size, static_cast<int>(m.size)};
    if (m.size == 1 || (m.block > 0 && !bc.channels) || (m.outer_inner > 0 && !bc.channels) ||
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
      auto g = std::make_unique<RunGen>(q, i, e, code->bcasts, lanes);
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
