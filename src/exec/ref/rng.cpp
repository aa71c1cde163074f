// Reference kernel: rng_bit_generator, transcribing XLA's RngBitGeneratorExpander and
// xla/hlo/builder/lib/prng.cc. state[0] is the key; THREE_FRY takes ui64[2] (key, counter) and
// runs Threefry2x32-20; PHILOX takes ui64[3] (key, 128-bit counter lo, hi) and runs
// Philox4x32-10 (a ui64[2] state also runs, as XLA CPU does). DEFAULT = PHILOX, as XLA's CPU
// compiler configures the expander.
// Checked against the Random123 known-answer vectors for counter 0 / key 0 (see rng tests).
#include <array>

#include "exec/ref/kernel_util.h"

namespace netspec::exec::ref {
namespace {

uint32_t rotl(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

std::array<uint32_t, 2> threefry2x32(std::array<uint32_t, 2> x, uint64_t key) {
  constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32), 0x1BD11BDA};
  ks[2] ^= ks[0] ^ ks[1];
  x[0] += ks[0];
  x[1] += ks[1];
  for (int block = 0; block < 5; ++block) {
    for (int r = 0; r < 4; ++r) {
      x[0] += x[1];
      x[1] = rotl(x[1], kRot[(block % 2) * 4 + r]);
      x[1] ^= x[0];
    }
    // Key injection after each group of four rounds.
    x[0] += ks[(block + 1) % 3];
    x[1] += ks[(block + 2) % 3] + static_cast<uint32_t>(block + 1);
  }
  return x;
}

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> x, uint64_t key) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t{x[0]} * 0xD2511F53u, p1 = uint64_t{x[2]} * 0xCD9E8D57u;
    x = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ k1, static_cast<uint32_t>(p0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return x;
}

// Writes the low `bits` of v to element i of out.
void put_bits(Tensor& out, int64_t i, uint64_t v) {
  size_t es = dtype_size(out.dtype());
  std::memcpy(static_cast<uint8_t*>(out.raw()) + static_cast<size_t>(i) * es, &v,
              es);  // little-endian
}

// THREE_FRY, 32-bit (and narrower) outputs: XLA splits the shape in halves along the first
// even dim (else the largest), counter j = index in the half shape, and interleaves the two
// output words along that dim. 64-bit outputs use one counter per element (x0 | x1 << 32).
uint64_t threefry_fill(Tensor& out, uint64_t key, uint64_t counter) {
  const Shape& s = out.shape();
  int bits = dtype_bits(out.dtype());
  if (bits == 64) {
    for (int64_t i = 0; i < out.numel(); ++i) {
      uint64_t c = counter + static_cast<uint64_t>(i);
      auto y = threefry2x32({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32)}, key);
      put_bits(out, i, uint64_t{y[0]} | (uint64_t{y[1]} << 32));
    }
    return counter + static_cast<uint64_t>(out.numel());
  }
  if (s.empty()) {
    auto y =
        threefry2x32({static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32)}, key);
    put_bits(out, 0, y[0]);
    return counter + 1;
  }
  int64_t split = -1;
  for (size_t d = 0; d < s.size() && split < 0; ++d)
    if (s[d] % 2 == 0) split = static_cast<int64_t>(d);
  if (split < 0) {
    split = 0;
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] > s[static_cast<size_t>(split)]) split = static_cast<int64_t>(d);
  }
  Shape half = s;
  half[static_cast<size_t>(split)] = (s[static_cast<size_t>(split)] + 1) / 2;
  auto hs = row_major_strides(half);
  int64_t k = 0;
  for_each_index(s, [&](const I64s& idx) {
    I64s h = idx;
    h[static_cast<size_t>(split)] = idx[static_cast<size_t>(split)] / 2;
    uint64_t c = counter + static_cast<uint64_t>(linear_index(h, hs));
    auto y = threefry2x32({static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32)}, key);
    put_bits(out, k++, y[static_cast<size_t>(idx[static_cast<size_t>(split)] % 2)]);
  });
  return counter + static_cast<uint64_t>(num_elements(half));
}

// PHILOX: blocks j = 0.. use the 128-bit counter + j; 32-bit outputs take the block's four
// words in order, 64-bit outputs pair them (w0 | w1 << 32, w2 | w3 << 32).
std::pair<uint64_t, uint64_t> philox_fill(Tensor& out, uint64_t key, uint64_t lo, uint64_t hi) {
  int64_t n = out.numel();
  bool wide = dtype_bits(out.dtype()) == 64;
  int64_t words = wide ? 2 * n : n;
  int64_t blocks = (words + 3) / 4;
  for (int64_t j = 0; j < blocks; ++j) {
    uint64_t cl = lo + static_cast<uint64_t>(j);
    uint64_t ch = hi + (cl < lo ? 1 : 0);
    auto w = philox4x32({static_cast<uint32_t>(cl), static_cast<uint32_t>(cl >> 32),
                         static_cast<uint32_t>(ch), static_cast<uint32_t>(ch >> 32)},
                        key);
    if (wide) {
      for (int64_t q = 0; q < 2 && 2 * j + q < n; ++q)
        put_bits(out, 2 * j + q, uint64_t{w[2 * q]} | (uint64_t{w[2 * q + 1]} << 32));
    } else {
      for (int64_t q = 0; q < 4 && 4 * j + q < n; ++q)
        put_bits(out, 4 * j + q, w[static_cast<size_t>(q)]);
    }
  }
  uint64_t nl = lo + static_cast<uint64_t>(blocks);
  return {nl, hi + (nl < lo ? 1 : 0)};
}

}  // namespace

std::vector<Tensor> eval_rng_bit_generator(const hlo::Op& op, const std::vector<Tensor>& in,
                                           RunContext&) {
  const Tensor& state = in[0];
  std::string alg = "DEFAULT";
  if (auto* e = op.attrs.get_if<hlo::EnumAttr>("rng_algorithm")) alg = e->value;
  Tensor new_state = state.clone();
  Tensor out = result_tensor(op, 1);
  if (is_bool(out.dtype())) fail("rng_bit_generator", "output element type i1 is not supported");
  if (dtype_size(state.dtype()) != 8 || state.rank() != 1)
    fail("rng_bit_generator", "state must be a 1-D 64-bit tensor (got {})", state.type_str());
  uint64_t* st = static_cast<uint64_t*>(new_state.raw());
  if (alg == "THREE_FRY") {
    if (state.numel() != 2)
      fail("rng_bit_generator", "THREE_FRY state has {} elements (expected 2)", state.numel());
    st[1] = threefry_fill(out, st[0], st[1]);
  } else if (alg == "PHILOX" || alg == "DEFAULT") {
    if (state.numel() == 2) {
      // A 2-element state has no high counter word; XLA CPU then uses state[0] (the key) as
      // the high word and keeps only the low one (found by matching its outputs, misc_test).
      st[1] = philox_fill(out, st[0], st[1], st[0]).first;
    } else if (state.numel() == 3) {
      auto [lo, hi] = philox_fill(out, st[0], st[1], st[2]);
      st[1] = lo;
      st[2] = hi;
    } else {
      fail("rng_bit_generator", "PHILOX state has {} elements (expected 2 or 3)", state.numel());
    }
  } else {
    fail("rng_bit_generator", "unknown rng_algorithm '{}' (expected DEFAULT, THREE_FRY or PHILOX)",
         alg);
  }
  return {new_state, out};
}

}  // namespace netspec::exec::ref
