// Op lists of the families whose type rules, ref kernels and VJP rules are each named after the
// op, so those files register the whole family from one list (a new op of the family then needs
// each of those functions, or the build fails naming it).
#pragma once

// The shape family, X(OpKind, name) in ops.def's order (tests/hlo/op_family_test.cpp checks the
// two agree): name is the mnemonic after "stablehlo." and the suffix of each consumer's function
// for the op: rule_<name> (verify_shape.cpp), eval_<name> (exec/ref/shape.cpp), the VJP rule
// <name> (autodiff/vjp_shape.cpp).
// clang-format off
#define NETSPEC_SHAPE_FAMILY(X) \
  X(kReshape, reshape) X(kBroadcastInDim, broadcast_in_dim) X(kTranspose, transpose) \
  X(kSlice, slice) X(kDynamicSlice, dynamic_slice) X(kDynamicUpdateSlice, dynamic_update_slice) \
  X(kConcatenate, concatenate) X(kPad, pad) X(kReverse, reverse)
// clang-format on
