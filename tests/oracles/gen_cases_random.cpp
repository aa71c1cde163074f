// Random programs (tests/support/random_program.h) as oracle cases: ref, cpu, XLA and IREE must
// agree on them, so ref itself (the cpu executor's differential reference in
// tests/exec/cpu_random_programs_test.cpp) is checked against independent engines on the same
// forms: clamped dynamic slices, while loops with swapped and stacked carries, if, calls,
// strided attention products. Cases random_f32_<seed> and random_f64_<seed>.
#include <string>
#include <utility>

#include "gen_cases.h"
#include "tests/support/random_program.h"

namespace netspec::oracles {
namespace {

template <uint32_t Seed, bool F64>
void random_case(CaseCtx& c) {
  const DType dt = F64 ? DType::kF64 : DType::kF32;
  testing::RandomProgram p(Seed, dt);
  p.build(c.m, c.f);
  c.inputs = p.inputs(Seed * 7);
  // Means over up to 512 terms and products of O(1) values: absolute and relative 1e-4 in f32.
  if (F64) {
    c.tol(1e-10, 1e-10);
    c.iree_cannot("iree-compile fails on f64 llvm.intr.tanh/exp/... (llvm-cpu)");
  } else {
    c.tol(1e-4, 1e-4);
  }
  // IREE (llvm-cpu, as installed) writes a dynamic_update_slice or scatter whose operand is an
  // argument of @main into the caller's input buffer: one case returned that argument changed
  // (random_f32_27: %4 = dynamic_update_slice %arg1 ..., returns %arg1), another failed at run
  // time (random_f32_7: scatter into %arg0; "requested buffer usage is not supported"). XLA, ref
  // and cpu agree on both. Such cases are compiled by IREE, not run.
  bool updates_arg = false;
  hlo::walk(*c.f->body, [&](const hlo::Op& op) {
    if ((op.kind == OpKind::kDynamicUpdateSlice || op.kind == OpKind::kScatter) &&
        op.operand(0)->is_block_arg() && op.operand(0)->block == c.f->body.get())
      updates_arg = true;
  });
  if (updates_arg)
    c.iree_wrong("IREE updates an argument's buffer in place (dynamic_update_slice / scatter)");
}

template <bool F64, uint32_t... Seeds>
bool register_random(std::integer_sequence<uint32_t, Seeds...>) {
  (add_case((std::string(F64 ? "random_f64_" : "random_f32_") + std::to_string(Seeds + 1)).c_str(),
            random_case<Seeds + 1, F64>),
   ...);
  return true;
}

[[maybe_unused]] const bool kRegistered =
    register_random<false>(std::make_integer_sequence<uint32_t, 32>()) &&
    register_random<true>(std::make_integer_sequence<uint32_t, 8>());

}  // namespace
}  // namespace netspec::oracles
