// IR passes: cleanup (dead-code elimination, common-subexpression elimination, folding of
// trivial identities) run on every generated module, plus the IR utilities the autodiff and the
// gradient checker build on: deep cloning of ops/functions/modules, inlining of func.call, and
// the f32 -> f64 rewrite. All passes work in place and keep the module verifiable.
#pragma once
#include <memory>
#include <optional>
#include <unordered_map>

#include "hlo/ir.h"

namespace netspec::hlo {

// Old value -> new value. Lookups of unmapped values fall back to the value itself (a region may
// use values of an enclosing scope that are not being cloned).
using ValueMap = std::unordered_map<const Value*, Value*>;
Value* lookup(const ValueMap& map, Value* v);

// --- cleanup passes; each returns true when it changed something ---
// Removes ops whose results are unused (recursively inside regions); terminators stay.
bool dce(Func& f);
// Merges ops equal in kind, operands, attributes, result types and regions (structurally); an op
// inside a region may reuse an equal op of an enclosing block.
bool cse(Func& f);
// x*1, 1*x, x+0, 0+x, x-0, x/1 -> x; broadcast_in_dim / reshape of a splat constant -> splat
// constant; transpose(transpose(x)) -> one transpose (or x); reshape(reshape(x)) -> reshape(x);
// reshape/convert/transpose to the identical type -> x; a sum of zero pads that tile one dim
// exactly (the VJP of slices of one value) -> the concatenation of the padded values.
bool fold_identities(Func& f);
// fold, cse, dce until nothing changes (at most a few rounds).
void run_cleanup(Func& f);
void run_cleanup(Module& m);

// --- memory ---
// Rematerialization (remat.cpp): a cheap elementwise value (add/mul/max/compare/select/convert/
// broadcast..., no transcendentals) of at least min_bytes whose uses fall in clusters more than
// min_gap ops apart is recomputed right before each later cluster, when its operands are alive
// there anyway (block arguments, values of at most small_bytes, values read at or after that
// point or at most `extend` ops before it, or cheap values recomputable the same way, up to
// max_depth deep). Shortens what a train step keeps alive from forward to backward; returns the
// number of clones.
struct RematOptions {
  size_t min_bytes = 64 << 10;
  size_t small_bytes = 64 << 10;
  int min_gap = 16;
  int extend = 16;
  int max_depth = 6;
};
int rematerialize(Block& b, const RematOptions& opt = {});

// Transposes read by dot_general folded into its dimension numbers where the dot's free dims keep
// their order (dot_fold.cpp), then dce: for executors whose matmul reads strided operands (the
// cpu planner runs it on its own copy). Returns the number of operands folded.
int fold_transposes_into_dots(Func& f);

// bf16-operand convolutions with an f32 result -> f32 convolutions of converted (exact) operands,
// one pair of converts per convolution right before it (bf16_widen.cpp): for an executor without
// native bf16 kernels. Returns the number of convolutions rewritten.
int widen_bf16_convolutions(Func& f);

// Slices moved into the op that produces their operand (slice_sink.cpp): slice(f(a, b)) =
// f(slice(a), slice(b)) for elementwise f whose operands are broadcasts or products read by f
// alone, slice(broadcast_in_dim(v)) = broadcast_in_dim(slice(v)), slice(dot(x, w)) = dot of the
// operand parts the slice reads (when a product is cut in several, each slice >=
// min_product_slice elements; operand copies no dearer than the slice copies and products saved). Only where slices are the producer's only readers and together read at
// most its elements. Then dce; returns the number of slices rewritten.
int sink_slices(Func& f, size_t min_product_slice = 4096);

// --- loop analysis (counted_loop.cpp) ---
// The value of a one-element stablehlo.constant, else nullopt.
std::optional<double> constant_scalar(const Value* v);
// A while whose condition is `arg_k < N` (N constant), whose carry k starts at a constant and
// whose body adds 1 to it: `trips` = max(0, N - start) turns, exactly.
struct CountedLoop {
  size_t counter = 0;
  int64_t start = 0, trips = 0;
};
std::optional<CountedLoop> counted_loop(const Op& w);
// Is state k of while w written whole before anything reads it, and never read: a counted loop
// from 0 whose body's only use of state k is result k = dynamic_update_slice(state k, a row of
// extent 1 in dim 0 and whole in the others, at (counter, 0, ...)), with dim 0 = the trip count,
// unread by the condition? Then the loop's initial value for it is never observed.
bool state_written_whole_unread(const Op& w, size_t k);

// --- cloning ---
// Appends a deep copy of `op` (regions included) to `into`, operands remapped through `map`;
// records old result -> new result in `map`. No re-verification (the copy has the same types).
Op* clone_op(Block* into, const Op& op, ValueMap& map);
// Deep copy of a whole module (callees are referenced by name, so calls stay valid).
std::unique_ptr<Module> clone_module(const Module& m);
// Inlines the body of `callee` into `into` with the given arguments; returns the values the
// callee's func.return yields (nested calls inside the callee stay calls).
std::vector<Value*> inline_call(Block* into, const Func& callee, const std::vector<Value*>& args);
// Replaces every func.call in f (in its regions too) by its callee's ops, callees' own calls
// included, up to max_depth levels and max_added_ops copied ops (a call past either stays a
// call: a chain of functions each calling the next twice would grow 2^depth); the callees stay
// in the module. For an executor that plans one function at a time: one arena, no result
// copies. Returns the number of calls inlined.
int inline_calls(Func& f, int max_depth = 8, size_t max_added_ops = 200000);

// --- type rewriting ---
// Rewrites every `from` element type (args, results, region args, constants) to `to` in place.
// Refuses bitcast_convert from/to `from` (its meaning depends on the bit width).
void convert_float_types(Module& m, DType from = DType::kF32, DType to = DType::kF64);

// Low-level op creation without type inference (used by clone and the passes).
Op* append_op(Block* into, OpKind kind, std::vector<Value*> operands, Attrs attrs,
              const std::vector<Type>& result_types);

}  // namespace netspec::hlo
