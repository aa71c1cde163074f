// Internal contract of the cpu executor (src/exec/cpu only): each op kind may have a Compiler
// that inspects one op at plan time and returns a Compiled kernel (type dispatch, primitive
// creation and layout decisions happen once here), or nullopt when this instance has no fast
// path (the planner then uses the ref kernel). Kernels write into preallocated result tensors.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "hlo/ir.h"

namespace netspec::exec::cpu {

// A form a kernel derives from a kept operand (RunArgs::in_gen), held by the executor's run state
// between calls (one per step): the data is valid for operands of generation `gen`.
struct KeptCopy {
  uint64_t gen = 0;
  std::shared_ptr<uint8_t[]> data;
  size_t bytes = 0;
  uint8_t* get(size_t n);  // data of at least n bytes (64-byte aligned; reallocated when smaller)
  // Marks data as derived from generation g (counted: the cpu backend's "kept_refreshes").
  void refreshed(uint64_t g);
};

struct RunArgs {
  const Tensor* const* in;  // operand tensors
  Tensor* const* out;       // result tensors (allocated by the planner, contents undefined)
  uint8_t* scratch;         // scratch_bytes of 64-byte-aligned memory (only during the call)
  // Per operand: nonzero when its contents equal those of every earlier call that saw the same
  // number (a session's kept state, a module constant); null: none is. `kept` is this step's
  // KeptCopy (null when the caller keeps none).
  const uint64_t* in_gen = nullptr;
  KeptCopy* kept = nullptr;
  uint64_t gen(size_t operand) const { return in_gen ? in_gen[operand] : 0; }
};

struct Compiled {
  std::function<void(const RunArgs&)> run;
  size_t scratch_bytes = 0;
  // Result i may share storage with any operand of the same byte size (out[j] depends only
  // on operands' element j), so the planner may run it in place.
  bool pointwise = false;
  std::vector<int> no_alias;  // operands that must not share storage with a result anyway
  // Result 0 is operand 0 reinterpreted with the result's shape (reshape): no kernel runs. With
  // view_offset, it is the contiguous run of operand 0 from that element on (a dynamic_slice or
  // slice of whole trailing dims); `run` stays a copying kernel for where a view cannot be used.
  bool view = false;
  std::function<int64_t(const RunArgs&)> view_offset;
  bool winograd = false;  // a convolution on a Winograd kernel (oneDNN's or netspec's own)
  bool padded_dot = false;  // a dot_general copying an operand to padded rows (dot.cpp RowPad)
  bool split_dot = false;   // a dot_general shared between threads by netspec (dot.cpp DotSplit)
  int chained_pairs = 0;    // a fused group's binary-op pairs run as one pass (fusion.cpp)
  int folded_broadcasts = 0;  // a fused group's broadcasts read in place by their binary op
  int generated_instructions = 0;  // a fused group's instructions run as generated code
  // run may keep a form derived from kept operands in RunArgs::kept (the planner passes in_gen).
  bool keeps = false;
};

using Compiler = std::optional<Compiled> (*)(const hlo::Op& op);

// Family registration (one file each).
void register_elementwise(Compiler* table);
void register_shape(Compiler* table);
void register_dynamic_slice(Compiler* table);  // dynamic_slice, dynamic_update_slice
void register_gather(Compiler* table);         // row gather, row scatter-add
void register_reduce(Compiler* table);
void register_dot(Compiler* table);
void register_conv(Compiler* table);
void register_window(Compiler* table);  // reduce_window (2-D pooling, else the generic one)
// A convolution whose kernel operand is `reverse(w, kernel spatial dims)`, compiled to read w
// itself and flip it while preparing its weights (the planner then skips the reverse: the
// input-gradient VJP's flipped kernels cost no pass of their own). nullopt: no such fast path.
std::optional<Compiled> compile_conv_rhs_reversed(const hlo::Op& conv);
// An f32 dot_general writing its result straight in the layout of transpose(result, perm), its
// only reader (the planner then skips the transpose: vit's head merge and the VJP's transposed
// gradients). nullopt when oneDNN has no non-reference matmul for those strides.
std::optional<Compiled> compile_dot_transposed_out(const hlo::Op& op, const hlo::I64s& perm);
// Batched f32 matrix-vector products (matvec.cpp), y [B, L]: rows = A [B, L, K], columns =
// A [B, K, L], x [B, K]. matvec_enabled(): NETSPEC_DOT_MATVEC is not "0".
bool matvec_enabled();
// small_gemm's AVX-512 tiles (small_gemm_avx512.cpp): B's columns contiguous, row stride ldb.
// small_gemm_avx512_runs(): built with AVX-512, oneDNN's ISA has it (ONEDNN_MAX_CPU_ISA=AVX2 caps
// it) and NETSPEC_SMALL_GEMM_AVX512 is not "0".
namespace small_gemm_avx512 {
bool built();
void tiles(int64_t M, int64_t N, int64_t K, const float* A, int64_t am, int64_t ak,
           const float* B, int64_t ldb, float* C, int64_t ldc);
}  // namespace small_gemm_avx512
bool small_gemm_avx512_runs();
// C [M, N] (row stride ldc) = A·B for one batch (small_gemm.cpp): A's element (i, k) at
// A[i·am + k·ak], B's (k, n) at B[k·bk + n·bn]; any strides. For small products (attention's).
// avx512: the AVX-512 tiles (only where small_gemm_avx512_runs(); the same bits either way).
void small_gemm(int64_t M, int64_t N, int64_t K, const float* A, int64_t am, int64_t ak,
                const float* B, int64_t bk, int64_t bn, float* C, int64_t ldc,
                bool avx512 = small_gemm_avx512_runs());
void matvec_rows(const float* A, const float* x, float* y, int64_t B, int64_t L, int64_t K);
void matvec_columns(const float* A, const float* x, float* y, int64_t B, int64_t L, int64_t K);
// reduce.cpp's reduce_window for any rank (the pooling kernels fall back to it).
std::optional<Compiled> compile_reduce_window_generic(const hlo::Op& op);

// A reduce_window / select_and_scatter window over rank r: window_dimensions, window_strides
// (default 1) and the low padding of each dim; nullopt when a dilation is not 1 or a list has the
// wrong length (cpu_util.cpp).
struct WindowAttrs {
  hlo::I64s win, strides;
  std::vector<int64_t> lo;
};
std::optional<WindowAttrs> undilated_window(const hlo::Op& op, size_t r);

// Elementwise fusion (fusion.cpp): chains of f32 elementwise ops (and the broadcasts they read)
// over one shape run as one tiled kernel. A group runs at the position of its last op; `ins` are
// the values it reads from outside, `outs` the member values read outside it (in op order).
struct FusedGroup {
  std::vector<const hlo::Op*> ops;
  std::vector<const hlo::Value*> ins, outs;
};
struct FusionPlan {
  std::vector<FusedGroup> groups;
  std::vector<const hlo::Op*> last_op_of;               // per group
  std::unordered_map<const hlo::Op*, int> member_of;    // non-broadcast members -> group
  std::unordered_map<const hlo::Op*, bool> skip_bcast;  // broadcasts only read inside groups
};
FusionPlan find_fusion_groups(const hlo::Block& body);
// block > 0: the group's full-shape values are channel-blocked [N, C/block, H, W, block]
// (fused_blockable must hold: rank 4, C % block == 0, only scalar or channel broadcasts).
Compiled compile_fused(const FusedGroup& g, int block = 0);
bool fused_blockable(const FusedGroup& g, int block);
// A blocked group whose f32 outputs k with init[k] set are each summed over (N?, H, W) instead of
// written (layout.cpp, plan.cpp): outputs = the written ones, then the sums [C] (over_n) or
// [N, C], in group order; each sum equals make_reduce_blocked of that output bit for bit.
std::optional<Compiled> compile_fused_reduce(const FusedGroup& g, int block,
                                             const std::vector<std::optional<float>>& init,
                                             bool over_n);

// Row folds (fusion_reduce.cpp, plan.cpp): a reduce of a plain group's output over the value's
// trailing dims (LayerNorm's mean and variance, softmax's max and sum) runs inside the group's
// loop on whole rows, so the reduced value is never written and read back (or not read back,
// when it has other readers: `written`). `kind` is add, maximum or minimum from `init`.
struct RowFold {
  hlo::OpKind kind = hlo::OpKind::kAdd;
  float init = 0;
  bool written = false;
};
// (combiner, row length) of an f32 reduce over its operand's trailing dims (size-1 dims aside)
// with add / maximum / minimum and a scalar init, else nullopt (reduce.cpp).
std::optional<std::pair<hlo::OpKind, int64_t>> row_fold_of(const hlo::Op& reduce);
// acc folded with p[0, n) exactly as the fast reduce folds a contiguous f32 row (add, maximum,
// minimum; NETSPEC_FAST_SUM=0 keeps the in-order sum).
float fold_f32_row(hlo::OpKind k, float acc, const float* p, int64_t n);
// dst[r] = fold_f32_row(k, init, p + r * row, row) for rows r in [0, nr), the same bits, short
// in-order sums run side by side.
void fold_f32_rows(hlo::OpKind k, float init, const float* p, int64_t row, int64_t nr, float* dst);
// Plain group g with output k also reduced by folds[k] over rows of `row` elements (row <= 512):
// outputs = the written ones (no fold, or fold.written) in group order, then the reductions
// [numel / row] in group order, each equal to the fast reduce of the materialised output bit
// for bit. nullopt when a folded output is not f32 or the rows do not fit a tile.
std::optional<Compiled> compile_fused_rows(const FusedGroup& g,
                                           const std::vector<std::optional<RowFold>>& folds,
                                           int64_t row);

// The channel block size for this CPU, read when a plan is built: 16 with AVX-512, 8 with AVX2,
// else 0 (row-major only); NETSPEC_CPU_LAYOUT=plain|8|16 overrides (8 = the AVX2 machines'
// choice, so that path runs and is tested on any CPU). NETSPEC_CONV_PLAIN=1 implies plain.
int layout_block_size();
// Channel-blocked layout (oneDNN nChw{B}c) kernels, see layout.cpp. A role is operand 0,
// operand 1 or the result of a convolution; each is 0 (row-major) or the block size B.
struct ConvBlocks {
  int x = 0, w = 0, y = 0;
  bool any() const { return x || w || y; }
};
// The roles of conv whose tensor is [N, C, H, W] in oneDNN's own order for the primitive the
// conv maps to, with C % B == 0 (operand 1 only in the weight-gradient form, where it is dy).
ConvBlocks conv_blockable_roles(const hlo::Op& conv, int B);
// conv with the given roles blocked (rhs_reversed: see compile_conv_rhs_reversed); nullopt when
// oneDNN has no non-reference primitive for those layouts.
std::optional<Compiled> compile_conv_blocked(const hlo::Op& conv, bool rhs_reversed, ConvBlocks b);
// A forward conv followed by y * s[c] + t[c] and, with relu, max(., 0) (BN on running statistics
// + ReLU) as oneDNN post-ops in the conv's own pass; operands 2 and 3 are s and t ([C]).
std::optional<Compiled> compile_conv_affine(const hlo::Op& conv, bool rhs_reversed, ConvBlocks b,
                                            bool relu);
// reduce of a blocked [N, C, H, W] operand over {0, 2, 3} or {2, 3} (add / max / min bodies).
std::optional<Compiled> compile_reduce_blocked(const hlo::Op& op, int B);
// For a sum that compile_reduce_blocked takes with a constant init: that init, and whether it
// runs over {0, 2, 3} (over_n) rather than {2, 3}; nullopt otherwise.
std::optional<std::pair<float, bool>> blocked_sum_init(const hlo::Op& reduce, int B);
// The value of a one-element f32-convertible constant (the init of a reduce), else nullopt.
std::optional<float> scalar_constant(const hlo::Value& v);
// reduce_window / select_and_scatter pooling over H, W of blocked operands (result blocked).
std::optional<Compiled> compile_pool_blocked(const hlo::Op& op, int B);

// f(T{}) when t is one of Ts (the element types a kernel instantiates), else nullopt.
template <typename... Ts, typename F>
std::optional<Compiled> with_dtype_among(DType t, F&& f) {
  if (t == DType::kBF16 || t == DType::kF16) return std::nullopt;  // visit_dtype has no C++ type
  return visit_dtype(t, "cpu", [&](auto z) -> std::optional<Compiled> {
    if constexpr ((std::is_same_v<decltype(z), Ts> || ...))
      return f(z);
    else
      return std::nullopt;
  });
}

// Shared helpers (cpu_util.cpp).
// Grain sizes for parallel_for: cheap ops get large chunks, transcendental ones small.
constexpr int64_t kGrainCheap = 1 << 15;
constexpr int64_t kGrainHeavy = 1 << 12;

// dst[i0..ir] = src[sum_d i_d * src_strides[d]] over `dims` (elements of size elem), dst dense
// row-major. src_strides may be negative (src points at the element for index 0). Parallel.
void strided_copy(void* dst, const void* src, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& src_strides, size_t elem);

// Strides (in elements) that view a row-major tensor of `shape` through permutation `perm`:
// view dim i walks shape dim perm[i].
std::vector<int64_t> permuted_strides(const Shape& shape, const std::vector<int64_t>& perm);
// Is a block of extents `sizes` of a row-major `shape` one contiguous run wherever it starts:
// size 1 in every dim before some dim k, whole in every dim after it?
bool contiguous_block(const Shape& shape, const Shape& sizes);

// bf16 contractions (mixed precision): true when NETSPEC_BF16_EMULATE is set (not "0"): dot and
// convolution then widen bf16 operands to f32 and run the f32 primitives, the path a CPU without
// native bf16 kernels takes (read at plan time, so tests can switch it).
bool bf16_emulated();
// Does the planner run bf16 convolutions as f32 ones on widened operands
// (hlo::widen_bf16_convolutions)? Yes with NETSPEC_BF16_EMULATE, no with NETSPEC_BF16_EMULATE=0,
// else yes unless oneDNN has native bf16 kernels here (AVX-512 BF16 or AMX): without them it
// widened inside every call, off the planner's blocked layouts and Winograd (ddpm-unet-gn's bf16
// step on an AVX2 EPYC: 955 ms that way, against 510 ms in f32).
bool bf16_widened_convolutions();
// dst[i] = f32 of bf16 src[i] (exact), parallel.
void widen_bf16(const uint16_t* src, float* dst, int64_t n);

// The combiner of a region `(a, b) -> op(a, b)` or `op(b, a)` (add, multiply, maximum, minimum,
// and, or), or nullopt (reduce.cpp).
std::optional<hlo::OpKind> combiner_of(const hlo::Block& b);

bool all_tensors(const hlo::Op& op);  // every operand and result is a ranked tensor
// An i64 list attribute, from `array<i64: ...>` or a dense i64 tensor (padding Nx2 flattens
// row-major); empty when absent.
hlo::I64s i64s_attr(const hlo::Op& op, const std::string& name);

}  // namespace netspec::exec::cpu
