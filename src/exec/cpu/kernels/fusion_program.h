// The program form of a fused elementwise group (fusion.cpp builds and runs it), shared with
// fusion_reduce.cpp, whose steps fold reductions of a group's outputs into the group's loop.
// Internal to kernels/: the planner sees only kernels.h.
#pragma once
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "exec/cpu/kernels.h"
#include "exec/cpu/kernels/vmath.h"
#include "exec/scalar_ops.h"

namespace netspec::exec::cpu::fused {

using hlo::OpKind;

// Elements per tile: a group runs its ops one after another on tiles of this many elements.
constexpr int64_t kTile = 512;

// Can `op` be a group member (f32 values, i1 masks)? (fusion.cpp; fusion_groups.cpp groups them)
bool fusable(const hlo::Op& op);

// Broadcast of an operand whose kept dims are one consecutive run of the result's dims:
// result element i reads operand element (i / inner) % size. Or two ordered runs (a [B, N] row
// broadcast over the middle dim of [B, D, N]): the outer run picks the block
// ((i / outer_inner) % outer_size) · size of the operand, the inner run reads within it as above.
// In a channel-blocked group (block B > 0) a channel broadcast reads operand element
// ((i / B / inner) % (size / B)) * B + i % B, inner = H * W.
struct BcastMap {
  int64_t inner = 1, size = 1;
  int64_t outer_inner = 0, outer_size = 1;  // outer_inner 0: one run
  int64_t block = 0;
};

// One step of a group program, keyed by the member's OpKind. kConvert copies its operand, or
// loads an external i1 input as 0/1 floats; kBroadcastInDim reads external input `a` through map.
struct Instr {
  OpKind op = OpKind::kConvert;
  CmpDir dir = CmpDir::kEq;    // kCompare
  int dst = -1;                // slot
  int a = -1, b = -1, c = -1;  // operand refs: slot >= 0, external input k as -(k + 1)
  BcastMap map;                // kBroadcastInDim
  // Binary ops: operand a / b is a pinned scalar broadcast, read as one register value instead
  // of streaming its constant slot (keeps the tile's working set in L1 on long chains).
  bool scalar_a = false, scalar_b = false, scalar_c = false;  // scalar_c: clamp's hi
  VecUnaryFn vec = nullptr;  // exp, log, tanh, logistic: the vector kernel (vmath.h)
  // A chained pair (chain_pairs): this binary op reads the result t of the binary op before it
  // (only broadcasts between them), which is read nowhere else and is not stored: t = pre(pa, pb) is computed in the same
  // loop, as operand b (pre_on_b) or a. The earlier instruction is then `skip`ped. Scalar flags
  // do not apply to a chained pair: pinned scalars are read as their filled slots.
  OpKind pre = OpKind::kConvert;  // kConvert: no chained op
  int pa = -1, pb = -1;
  bool pre_on_b = false, skip = false;
  // A folded broadcast (fold_broadcasts): operand a (fold 1) or b (fold 2) of this binary op is
  // external input fsrc (-(k + 1)) read through fmap in place; its broadcast is `skip`ped.
  int fold = 0, fsrc = -1;
  BcastMap fmap;
};

struct JitCode;  // fusion_jit.cpp: a group's generated kernels and the steps of its tile

struct Program {
  std::vector<Instr> code;
  int slots = 0;
  std::vector<int> pinned;                 // slots filled once per chunk (scalar broadcasts)
  std::vector<std::pair<int, bool>> outs;  // (slot, is_i1) per group output
  std::vector<bool> in_is_i1;
  int64_t n = 0;
  // Direct outputs (run_program): output k's slot may live in its output buffer when nothing
  // reads an input sharing that buffer after the slot's first write (first_write[k]); last_read[j]
  // is the last instruction reading external input j (-1: none).
  std::vector<int> first_write, last_read;
  int chained = 0;  // instructions with a chained op (Instr::pre)
  int folded = 0;   // instructions reading a folded broadcast (Instr::fold)
  std::shared_ptr<const JitCode> jit;  // set: run_tile runs generated code (fusion_jit.cpp)
  int generated = 0;                   // instructions inside generated kernels
};

// fusion_operands.cpp: the passes that let one instruction read more than two tile slots
// (chain_pairs before fold_broadcasts, both after the code is built), and their kernels on a tile
// [off, off + n): run_chained reads operands a, b of the chained op and c of in; run_folded
// reads `other` (in's operand that is not folded) and the broadcast of src.
void chain_pairs(Program& p);
void fold_broadcasts(Program& p);
void run_chained(const Instr& in, float* d, const float* a, const float* b, const float* c,
                 int64_t n);
void run_folded(const Instr& in, float* d, const float* other, const float* src, int64_t off,
                int64_t n);

// fusion_jit.cpp: generated code for runs of a group's arithmetic. A run's values stay in
// registers across its instructions, a vector of elements at a time, where the interpreter moves
// each instruction's whole tile through L1. The math is the interpreter's, instruction for
// instruction (no contraction into FMAs; erf as Scalar<kErf>), so results are equal bit for bit.
// NETSPEC_FUSION_JIT=1 / 0 turns it on / off; by default it is on for CPUs with AVX2 and FMA
// (measured faster on AVX2-only Zen 1 and, on every peer net, on AVX-512 Zen 5).
bool fusion_jit_enabled();
// Lanes of the generated vectors: 16 (AVX-512 zmm) where oneDNN's effective ISA has avx512_core
// (ONEDNN_MAX_CPU_ISA=AVX2 caps it), else 8 (AVX2 ymm); NETSPEC_FUSION_JIT_LANES=8 forces 8.
// Read when a group is planned.
int fusion_jit_lanes();
// Rewrites p for generated code (broadcasts and i1 loads first, each into a slot of its own) and
// compiles its runs; false, p unchanged, where there is nothing to generate.
bool compile_jit(Program& p);
// run_tile for a program with generated code.
void run_jit_tile(const Program& p, const RunArgs& args, const std::vector<const float*>& in_f,
                  float* const* slot_ptr, int64_t off, int64_t n, bool& pinned_done);
// One interpreted instruction on the tile [off, off + n) (fusion.cpp).
void run_instr(const Program& p, const Instr& in, const RunArgs& args,
               const std::vector<const float*>& in_f, float* const* slot_ptr, int64_t off,
               int64_t n);

// The program of group g (block > 0: channel-blocked, fused_blockable holds).
Program build_program(const FusedGroup& g, int block);
// Elements [off, off + n) of each of `full` (prefetched_inputs), fetched while a tile runs.
struct TilePrefetch {
  const std::vector<const float*>* full = nullptr;
  int64_t off = 0, n = 0;
};
// Runs p's code on the tile [off, off + n) of the domain into the slots at slot_ptr (a tile
// buffer's, or an output's own memory at off). Pinned scalar broadcasts are filled on a thread's
// first tile only (pinned_done). pf's lines are prefetched a share before each instruction.
void run_tile(const Program& p, const RunArgs& args, const std::vector<const float*>& in_f,
              float* const* slot_ptr, int64_t off, int64_t n, bool& pinned_done,
              const TilePrefetch& pf = {});
// The f32 inputs' data (null for i1 inputs), a per-thread tile buffer and its slot pointers.
std::vector<const float*> f32_inputs(const Program& p, const RunArgs& args);
std::vector<float> tile_buffer(const Program& p);
std::vector<float*> slot_pointers(const Program& p, std::vector<float>& buf);
// Which f32 outputs k (out[k]: its tensor, null when not written) are computed in their own
// buffers, no copy out of a tile slot: one per slot, not pinned, and no input sharing memory with
// it read after the slot's first write (a dying input may donate its buffer: c.pointwise).
std::vector<bool> direct_outputs(const Program& p, const RunArgs& args, Tensor* const* out);
// Inputs read element for element (not through broadcasts) in groups of at least 256 KiB: a
// later tile of each is prefetched while a tile runs (TilePrefetch), as a tile's ops read them
// only briefly between passes over the tile slots.
std::vector<const float*> prefetched_inputs(const Program& p, const RunArgs& args,
                                           const std::vector<const float*>& in_f);
// Inputs read through non-scalar broadcasts are read at other positions than the tile being
// written: they never share an output's buffer (Compiled::no_alias).
void broadcast_inputs_no_alias(const Program& p, Compiled& c);

}  // namespace netspec::exec::cpu::fused
