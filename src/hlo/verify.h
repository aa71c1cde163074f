// Type inference and verification of ops against the StableHLO specification's constraints.
// One rule per op, grouped by family in verify_<family>.cpp; each rule checks operands,
// attributes and regions and returns the result types, throwing
// `[mnemonic] what is wrong (got X, expected Y)` on violation.
#pragma once
#include <vector>

#include "hlo/ir.h"

namespace netspec::hlo {

// `given` are result types stated by the caller (the parser always states them; the builder
// states them for ops whose result is not implied by the operands: constant, iota, reshape,
// broadcast_in_dim, convert, bitcast_convert, rng_bit_generator, and dot_general/convolution
// when the result element type differs). When `given` is non-empty it must match the rule.
std::vector<Type> infer_result_types(const Op& op, const std::vector<Type>& given);

// Thrown by verify_module: an Error that also carries the offending op's (or function's)
// source location (line 0 when unknown), so a parser can report `file:line:col`.
class VerifyError : public Error {
 public:
  VerifyError(const std::string& msg, Location loc) : Error(msg), loc_(loc) {}
  Location location() const { return loc_; }

 private:
  Location loc_;
};

// The deepest nesting of func.calls (each call counts 1, plus the regions it sits in) a module
// may have: the executors recurse per level, and 8 MiB of stack must hold it under ASan too.
inline constexpr int kMaxCallDepth = 256;

// Whole-module check: every op's rule, operands defined before use (SSA dominance, regions
// see enclosing values), terminators and their types, func.call signatures (an acyclic call
// graph at most kMaxCallDepth deep), unique names. Throws VerifyError.
void verify_module(const Module& m);

// Rule table plumbing (used by verify_*.cpp).
using InferRule = std::vector<Type> (*)(const Op& op, const std::vector<Type>& given);
void register_misc_rules(InferRule* table);
void register_unary_rules(InferRule* table);
void register_binary_rules(InferRule* table);
void register_shape_rules(InferRule* table);
void register_dot_conv_rules(InferRule* table);
void register_reduce_window_rules(InferRule* table);
void register_gather_sort_rules(InferRule* table);
void register_control_rules(InferRule* table);
void register_collective_rules(InferRule* table);

}  // namespace netspec::hlo
