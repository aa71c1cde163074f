// The JAX emitter's text (jax/program.h) without JAX: one function per layer named by the spec,
// the ParamTable in PARAMS, the AF2 layers, counted loops as fori_loop, custom VJPs, f64.
// Running the programs against netspec's train step is tests/jax/check_jax.py (oracle venv).
#include "jax/program.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "layers/param_table.h"
#include "spec/zoo.h"

namespace netspec {
namespace {

// Layer functions written for eval mode: "def layer<i>_<kind>_eval(".
size_t eval_layers(const std::string& s) {
  size_t n = 0;
  for (size_t at = s.find("def layer"); at != std::string::npos; at = s.find("def layer", at + 1))
    n += s.substr(at, s.find('(', at) - at).ends_with("_eval");
  return n;
}

TEST(JaxProgram, MlpHasLayersParamsAndTrainStep) {
  SpecFile sf = resolve_net("mlp");
  std::string py = jax::emit_program(sf.net, sf.train.value_or(TrainConfig{}), 4);
  EXPECT_NE(py.find("def layer0_flatten(x):"), std::string::npos);
  EXPECT_NE(py.find("def layer1_dense(params, h0):"), std::string::npos);
  EXPECT_NE(py.find("    h3 = layer3_dense(params, h2)"), std::string::npos);
  EXPECT_NE(py.find("t0 = lax.reshape(x, (4, 784))"), std::string::npos);
  EXPECT_NE(py.find("jax.value_and_grad(loss, has_aux=True)"), std::string::npos);
  EXPECT_NE(py.find("INPUT = ((4, 1, 28, 28), jnp.float32)"), std::string::npos);
  ParamTable t = build_param_table(sf.net);
  for (const auto& p : t.params) EXPECT_NE(py.find("(\"" + p.name + "\", "), std::string::npos);
  // The mlp has no BN: eval reuses every train layer, so no _eval layer function is written.
  EXPECT_EQ(eval_layers(py), 0u) << py;
}

TEST(JaxProgram, BnLayersGetEvalBodiesAndStats) {
  SpecFile sf = resolve_net("cifar-bn");
  std::string py = jax::emit_program(sf.net, sf.train.value_or(TrainConfig{}), 2);
  ParamTable t = build_param_table(sf.net);
  ASSERT_FALSE(t.bns.empty());
  for (const auto& bn : t.bns) {
    EXPECT_NE(py.find("stats[\"" + bn.name + ".batch_mean\"]"), std::string::npos) << bn.name;
    EXPECT_NE(py.find("running[\"" + bn.name + ".running_var\"]"), std::string::npos) << bn.name;
  }
  EXPECT_EQ(eval_layers(py), t.bns.size()) << py;  // cifar-bn: one BN per such layer
}

TEST(JaxProgram, CountedLoopBecomesForiLoop) {
  SpecFile sf = resolve_net("tiny-gpt-rope");  // flash attention: a while over key blocks
  std::string py = jax::emit_program(sf.net, sf.train.value_or(TrainConfig{}), 2);
  EXPECT_NE(py.find("lax.fori_loop(0, 1, lambda _, s: "), std::string::npos);
  EXPECT_EQ(py.find("lax.while_loop("), std::string::npos);
}

// protein-fold: one function per layer with its two taps (the evoformer reads the residue track
// and the pair map); the structure module's rotation stop-gradient (a custom VJP whose backward
// gives no cotangent) is jax.custom_vjp with a backward returning None (zero), not a plain call.
TEST(JaxProgram, ProteinFoldKeepsItsStopGradient) {
  SpecFile sf = resolve_net("protein-fold");
  std::string py = jax::emit_program(sf.net, TrainConfig{}, 1);
  EXPECT_NE(py.find("def layer1_pairTile(params, h0):"), std::string::npos);
  EXPECT_NE(py.find("def layer2_evoformerBlock(params, h0, h1):"), std::string::npos);
  EXPECT_NE(py.find("def layer3_structureModule(params, h0, h2):"), std::string::npos);
  const std::string fn = "fn_stop_gradient__1x64x3x3f32";
  EXPECT_NE(py.find("def " + fn + "(a0):\n    return a0\n"), std::string::npos) << py;
  EXPECT_NE(py.find("def " + fn + "_bwd(a0, a1, a2):\n    return (None,)\n"), std::string::npos);
  EXPECT_NE(py.find(fn + "_vjp = _custom_vjp(" + fn + ", " + fn + "_bwd)"), std::string::npos);
  EXPECT_NE(py.find(" = " + fn + "_vjp("), std::string::npos);
  EXPECT_EQ(py.find(" = " + fn + "("), std::string::npos);  // every call goes through the VJP
}

// Flash attention's custom VJP: its backward (netspec's, with its own key loop) is translated.
TEST(JaxProgram, FlashAttentionGetsItsBackward) {
  SpecFile sf = resolve_net("tiny-gpt-rope");
  std::string py = jax::emit_program(sf.net, sf.train.value_or(TrainConfig{}), 2);
  size_t bwd = py.find("_bwd(a0, a1, a2, a3, a4, a5, a6):");
  ASSERT_NE(bwd, std::string::npos) << py;  // q, k, v, then O, lse, then their cotangents
  EXPECT_NE(py.find("= _custom_vjp(fn_flash_attention"), std::string::npos);
}

// --dtype f64: the same program in f64 (x64 switched on), no f32 tensor left.
TEST(JaxProgram, F64ProgramHasNoF32) {
  SpecFile sf = resolve_net("cifar-bn");
  std::string py = jax::emit_program(sf.net, sf.train.value_or(TrainConfig{}), 2, DType::kF64);
  EXPECT_NE(py.find("jax.config.update(\"jax_enable_x64\", True)"), std::string::npos);
  EXPECT_NE(py.find("FLOAT = jnp.float64"), std::string::npos);
  EXPECT_NE(py.find("INPUT = ((2, 3, 32, 32), jnp.float64)"), std::string::npos);
  EXPECT_EQ(py.find("jnp.float32"), std::string::npos);
  EXPECT_THROW(jax::emit_program(sf.net, TrainConfig{}, 2, DType::kF16), Error);
}

}  // namespace
}  // namespace netspec
