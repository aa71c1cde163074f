// What a fused group's binary ops read in their one pass over a tile, beyond two tile slots
// (fusion_program.h's Instr): a chained pair computes the op before it in the same loop
// (Instr::pre), and a folded broadcast reads its operand in place through the broadcast's map
// (Instr::fold) instead of from a slot the broadcast filled first. The tile interpreter of
// fusion.cpp is bound by its loads and stores (Zen 1 moves 256-bit vectors in halves), so each
// pass saved is one store and one load of a tile fewer. Both keep the unfused results bit for
// bit: this file is compiled with -ffp-contract=off (CMakeLists.txt), so a multiply feeding an
// add in a chain is never contracted into one FMA, and a folded op applies the same
// Scalar<K>::apply to the same values.
#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "exec/cpu/kernels/fusion_program.h"

namespace netspec::exec::cpu::fused {

namespace {

// Chained pairs (Instr::pre): d = g(f(a, b), c), or g(c, f(a, b)) when the chained result is
// g's operand b, with both roundings kept.
constexpr bool chainable(OpKind k) {
  return k == OpKind::kAdd || k == OpKind::kSubtract || k == OpKind::kMultiply ||
         k == OpKind::kDivide;
}

template <OpKind F, OpKind G, bool OnB>
void chained(float* d, const float* a, const float* b, const float* c, int64_t n) {
#pragma GCC ivdep
  for (int64_t j = 0; j < n; ++j) {
    const float t = Scalar<F>::apply(a[j], b[j]);
    d[j] = OnB ? Scalar<G>::apply(c[j], t) : Scalar<G>::apply(t, c[j]);
  }
}

template <OpKind F, OpKind G>
void chained_on(const Instr& in, float* d, const float* a, const float* b, const float* c,
                int64_t n) {
  if (in.pre_on_b)
    chained<F, G, true>(d, a, b, c, n);
  else
    chained<F, G, false>(d, a, b, c, n);
}

template <OpKind F>
void chained_pre(const Instr& in, float* d, const float* a, const float* b, const float* c,
                 int64_t n) {
  switch (in.op) {
    case OpKind::kAdd: return chained_on<F, OpKind::kAdd>(in, d, a, b, c, n);
    case OpKind::kSubtract: return chained_on<F, OpKind::kSubtract>(in, d, a, b, c, n);
    case OpKind::kMultiply: return chained_on<F, OpKind::kMultiply>(in, d, a, b, c, n);
    default: return chained_on<F, OpKind::kDivide>(in, d, a, b, c, n);
  }
}

}  // namespace

void run_chained(const Instr& in, float* d, const float* a, const float* b, const float* c,
                 int64_t n) {
  switch (in.pre) {
    case OpKind::kAdd: return chained_pre<OpKind::kAdd>(in, d, a, b, c, n);
    case OpKind::kSubtract: return chained_pre<OpKind::kSubtract>(in, d, a, b, c, n);
    case OpKind::kMultiply: return chained_pre<OpKind::kMultiply>(in, d, a, b, c, n);
    default: return chained_pre<OpKind::kDivide>(in, d, a, b, c, n);
  }
}

namespace {

template <OpKind K, bool OnB>
inline float apply(float x, float v) {
  return OnB ? Scalar<K>::apply(x, v) : Scalar<K>::apply(v, x);
}

// d[j] = f(a[j], v) over [0, len): the operand is one value (a run of a per-row value).
template <OpKind K, bool OnB>
void with_value(float* d, const float* a, float v, int64_t len) {
#pragma GCC ivdep
  for (int64_t k = 0; k < len; ++k) d[k] = apply<K, OnB>(a[k], v);
}

// `runs` runs of R elements, run r reading base[q + r] (wrapping at size): R fixed makes each
// run a few whole vectors, no loop tail (fill_runs' reason).
template <OpKind K, bool OnB, int R>
void with_runs(float* d, const float* a, const float* base, int64_t q, int64_t size,
               int64_t runs) {
  for (int64_t r = 0; r < runs; ++r, d += R, a += R) {
    const float v = base[q];
    // Kept a loop (not unrolled first) so that the loop vectoriser, told by ivdep that d and a
    // coincide or are apart, takes it: fully unrolled, the SLP pass left it scalar.
#pragma GCC ivdep
#pragma GCC unroll 1
    for (int k = 0; k < R; ++k) d[k] = apply<K, OnB>(a[k], v);
    if (++q == size) q = 0;
  }
}

// `periods` periods of R elements, each reading s[0, R): a short period (B over channels).
template <OpKind K, bool OnB, int R>
void with_periods(float* d, const float* a, const float* s, int64_t periods) {
  for (int64_t r = 0; r < periods; ++r, d += R, a += R) {
#pragma GCC ivdep
#pragma GCC unroll 1
    for (int k = 0; k < R; ++k) d[k] = apply<K, OnB>(a[k], s[k]);
  }
}

// d[j] = f(a[j], s[j]) over [0, len): the operand is a stretch of one period.
template <OpKind K, bool OnB>
void with_stretch(float* d, const float* a, const float* s, int64_t len) {
#pragma GCC ivdep
  for (int64_t k = 0; k < len; ++k) d[k] = apply<K, OnB>(a[k], s[k]);
}

// Domain elements [i, i + len) into d (operand a alongside), the operand block at base.
template <OpKind K, bool OnB>
void folded_run(float* d, const float* a, const BcastMap& m, int64_t i, int64_t len,
                const float* base) {
  const int64_t size = m.size;
  if (m.inner == 1) {  // the block repeats with period `size`
    if (i % size == 0 && len % size == 0) {
      if (size == 16) return with_periods<K, OnB, 16>(d, a, base, len / 16);
      if (size == 8) return with_periods<K, OnB, 8>(d, a, base, len / 8);
    }
    for (int64_t e = 0; e < len;) {
      const int64_t q = (i + e) % size, l = std::min(len - e, size - q);
      with_stretch<K, OnB>(d + e, a + e, base + q, l);
      e += l;
    }
    return;
  }
  int64_t q = (i / m.inner) % size, r = i % m.inner;
  if (r == 0 && len % m.inner == 0) {
    if (m.inner == 16) return with_runs<K, OnB, 16>(d, a, base, q, size, len / 16);
    if (m.inner == 8) return with_runs<K, OnB, 8>(d, a, base, q, size, len / 8);
  }
  for (int64_t e = 0; e < len;) {
    const int64_t l = std::min(len - e, m.inner - r);
    with_value<K, OnB>(d + e, a + e, base[q], l);
    e += l;
    r = 0;
    if (++q == size) q = 0;
  }
}

// d[j] = f(a[j], B(off + j)) (OnB) or f(B(off + j), a[j]), B the broadcast of src through m
// (one run or two, no channel blocks) read in place.
template <OpKind K, bool OnB>
void folded(float* d, const float* a, const float* src, const BcastMap& m, int64_t off,
            int64_t n) {
  if (m.outer_inner == 0) return folded_run<K, OnB>(d, a, m, off, n, src);
  const int64_t oi = m.outer_inner, os = m.outer_size;
  for (int64_t j = 0; j < n;) {
    const int64_t i = off + j, len = std::min(n - j, oi - i % oi);
    folded_run<K, OnB>(d + j, a + j, m, i, len, src + ((i / oi) % os) * m.size);
    j += len;
  }
}

template <OpKind K>
void folded_on(const Instr& in, float* d, const float* a, const float* src, int64_t off,
               int64_t n) {
  if (in.fold == 2)
    folded<K, true>(d, a, src, in.fmap, off, n);
  else
    folded<K, false>(d, a, src, in.fmap, off, n);
}

}  // namespace

void run_folded(const Instr& in, float* d, const float* other, const float* src, int64_t off,
                int64_t n) {
  switch (in.op) {
#define FOLDED_CASE(KIND) \
  case OpKind::KIND:      \
    return folded_on<OpKind::KIND>(in, d, other, src, off, n);
    FOLDED_CASE(kAdd)
    FOLDED_CASE(kSubtract)
    FOLDED_CASE(kMultiply)
    FOLDED_CASE(kDivide)
    FOLDED_CASE(kMaximum)
    FOLDED_CASE(kMinimum)
#undef FOLDED_CASE
    default:
      fail("cpu fusion", "{} cannot read a folded broadcast", op_name(in.op));
  }
}

namespace {

// Does instruction `in` read slot s (as an operand or as its chained op's)?
bool reads_slot(const Instr& in, int s) {
  return in.a == s || in.b == s || in.c == s || in.pa == s || in.pb == s;
}

bool is_output_slot(const Program& p, int s) {
  return std::any_of(p.outs.begin(), p.outs.end(), [&](const auto& o) { return o.first == s; });
}

}  // namespace

// NETSPEC_FUSED_CHAINS=0: no chained pairs (read at plan time, for A/B runs and the tests).
bool chains_enabled() {
  const char* e = std::getenv("NETSPEC_FUSED_CHAINS");
  return !(e && std::string_view(e) == "0");
}

// Chains two binary ops into one pass over the tile where the first's result feeds only the
// second (Instr::pre): an Adam update's 13 passes become ~9. p.outs is set; instruction indices
// stay (the first op is skipped, not removed), so last_read only moves to the chained op.
void chain_pairs(Program& p) {
  if (!chains_enabled()) return;
  auto binary_plain = [&](const Instr& in) {
    return chainable(in.op) && !in.skip && in.pre == OpKind::kConvert;
  };
  for (size_t i = 0; i + 1 < p.code.size(); ++i) {
    Instr& x = p.code[i];
    if (!binary_plain(x)) continue;
    const int t = x.dst;
    // y: the next instruction past broadcasts that leave x's operands and t alone (the pinned
    // scalars a chain reads are filled between them).
    size_t yi = i + 1;
    while (yi < p.code.size() && p.code[yi].op == OpKind::kBroadcastInDim &&
           p.code[yi].dst != x.a && p.code[yi].dst != x.b && p.code[yi].dst != t)
      ++yi;
    if (yi >= p.code.size()) continue;
    Instr& y = p.code[yi];
    if (!binary_plain(y)) continue;
    if ((y.a == t) == (y.b == t)) continue;  // t must be exactly one of y's operands
    if (std::find(p.pinned.begin(), p.pinned.end(), t) != p.pinned.end()) continue;
    bool used_later = is_output_slot(p, t);
    for (size_t j = yi + 1; j < p.code.size() && !used_later; ++j) {
      if (reads_slot(p.code[j], t)) used_later = true;
      if (p.code[j].dst == t) break;  // rewritten before any read
    }
    if (used_later) continue;
    y.pre = x.op, y.pa = x.a, y.pb = x.b, y.pre_on_b = y.b == t;
    if (y.pre_on_b)
      y.b = -1, y.scalar_b = false;
    else
      y.a = y.b, y.b = -1, y.scalar_b = false;  // the other operand moves to a; pa, pb: t's
    y.scalar_a = false;
    x.skip = true;
    ++p.chained;
    for (int r : {x.a, x.b})
      if (r < 0) p.last_read[static_cast<size_t>(-r - 1)] =
          std::max(p.last_read[static_cast<size_t>(-r - 1)], static_cast<int>(yi));
  }
}

// NETSPEC_FUSED_BCAST=0: no folded broadcasts (read at plan time, for A/B runs and the tests).
bool folds_enabled() {
  const char* e = std::getenv("NETSPEC_FUSED_BCAST");
  return !(e && std::string_view(e) == "0");
}

// A broadcast of an external input (runs of >= 8 copies, or a period of >= 8 elements; one or
// two runs, not a channel-blocked one) whose only reader is a plain binary op (add, subtract,
// multiply, divide, maximum, minimum; not chained, its other operand not a pinned scalar) is
// read by that op through the map (Instr::fold) and skipped. Runs after chain_pairs: the
// reads of a skipped (chained-away) instruction are its chained op's pa, pb.
void fold_broadcasts(Program& p) {
  if (!folds_enabled()) return;
  auto foldable_reader = [](const Instr& y) {
    switch (y.op) {
      case OpKind::kAdd: case OpKind::kSubtract: case OpKind::kMultiply: case OpKind::kDivide:
      case OpKind::kMaximum: case OpKind::kMinimum:
        return !y.skip && y.pre == OpKind::kConvert && y.fold == 0;
      default:
        return false;
    }
  };
  for (size_t i = 0; i < p.code.size(); ++i) {
    Instr& bc = p.code[i];
    if (bc.op != OpKind::kBroadcastInDim || bc.skip || bc.map.size == 1 || bc.map.block != 0)
      continue;
    if (!(bc.map.inner >= 8 || (bc.map.inner == 1 && bc.map.size >= 8))) continue;
    const int s = bc.dst;
    if (is_output_slot(p, s)) continue;
    int reader = -1, readers = 0;
    for (size_t j = i + 1; j < p.code.size(); ++j) {
      const Instr& y = p.code[j];
      if (!y.skip && reads_slot(y, s)) ++readers, reader = static_cast<int>(j);
      if (!y.skip && y.dst == s) break;  // rewritten: later reads are of another value
    }
    if (readers != 1) continue;
    Instr& y = p.code[static_cast<size_t>(reader)];
    if (!foldable_reader(y) || (y.a == s) == (y.b == s)) continue;
    const bool on_b = y.b == s;
    if (on_b ? y.scalar_a : y.scalar_b) continue;  // the other operand streams from a slot
    y.fold = on_b ? 2 : 1;
    y.fsrc = bc.a;
    y.fmap = bc.map;
    if (on_b)
      y.b = -1;
    else
      y.a = -1;
    bc.skip = true;
    ++p.folded;
    const size_t k = static_cast<size_t>(-bc.a - 1);
    p.last_read[k] = std::max(p.last_read[k], reader);
  }
}

}  // namespace netspec::exec::cpu::fused
