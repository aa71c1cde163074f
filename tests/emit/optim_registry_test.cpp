// The optimizer registry (optim/rule.h) and the gradient chain (optim/transforms.h): every
// OptimizerKind has a rule with the state slots the train step's signature always had, Muon and
// Shampoo partition the parameters by eligibility (AdamW for the rest), and the transforms
// compose in order, checked on values.
#include <gtest/gtest.h>

#include <cmath>

#include "emit_test_util.h"
#include "error_of.h"
#include "optim/rule.h"
#include "optim/transforms.h"

namespace netspec::emit::testing {
namespace {

using Slots = std::vector<std::string>;

TEST(OptimRegistry, EveryKindHasARuleWithItsStateSlots) {
  // The slot names state_slots reported before the rules were split into files: they name the
  // optimizer_state inputs of every emitted train step and of the checkpoints.
  const std::map<std::string, Slots> want = {
      {"sgd", {}},          {"adam", {"m", "v"}}, {"rmsprop", {"ms", "mom"}},
      {"lamb", {"m", "v"}}, {"muon", {"m", "v"}}, {"shampoo", {"m", "v"}}};
  ASSERT_EQ(std::size(EnumTraits<OptimizerKind>::kNames), want.size());
  EXPECT_EQ(optim::registered_kinds().size(), want.size());
  for (std::string_view name : EnumTraits<OptimizerKind>::kNames) {
    SCOPED_TRACE(name);
    optim::OptimConfig c;
    c.kind = *parse_enum<OptimizerKind>(name);
    const optim::UpdateRule& r = optim::rule_for(c.kind);
    EXPECT_NE(r.update, nullptr);
    EXPECT_EQ(optim::state_slots(c), want.at(std::string(name)));
    c.momentum = 0.9;  // only sgd's slots depend on the config
    EXPECT_EQ(optim::state_slots(c),
              name == "sgd" ? Slots{"momentum"} : want.at(std::string(name)));
    // A matrix rule's fallback keeps the same slots, so the signature is one per kind.
    if (r.fallback) {
      EXPECT_EQ(optim::state_slots(c), optim::rule_for(*r.fallback).slots(c));
    }
  }
}

TEST(OptimRegistry, AKindWithoutARuleIsRefusedWithTheRegisteredOnes) {
  optim::OptimConfig c;
  c.kind = static_cast<OptimizerKind>(42);
  EXPECT_EQ(test_util::error_of([&] { optim::state_slots(c); }),
            "[optimizer] optimizer kind has no update rule (got 42, expected one of: sgd, adam, "
            "rmsprop, lamb, muon, shampoo)");
}

TEST(OptimRegistry, MatrixRulesPartitionByEligibility) {
  // weights [16,5], [16,16], [20,16], [6,20] and their biases.
  const ParamTable t = build_param_table(NetBuilder("mat")
                                             .input(5)
                                             .add(Dense{5, 16, Activation::relu})
                                             .add(Dense{16, 16, Activation::relu})
                                             .add(Dense{16, 20, Activation::relu})
                                             .add(Dense{20, 6})
                                             .build());
  ASSERT_EQ(t.params.size(), 8u);
  const auto muon = optim::partition(OptimizerKind::muon, t);
  const auto shampoo = optim::partition(OptimizerKind::shampoo, t);
  const auto lamb = optim::partition(OptimizerKind::lamb, t);
  for (size_t i = 0; i < t.params.size(); ++i) {
    const std::string& name = t.params[i].name;
    SCOPED_TRACE(name);
    const bool weight = name.ends_with(".weight");
    EXPECT_EQ(muon[i], weight ? OptimizerKind::muon : OptimizerKind::adam);
    EXPECT_EQ(shampoo[i], name == "layers.1.weight" ? OptimizerKind::shampoo : OptimizerKind::adam);
    EXPECT_EQ(lamb[i], OptimizerKind::lamb);  // element-wise rules take every parameter
  }
}

TEST(OptimChain, DefaultChainIsFreezeClipDecayHeadLrAndOnlyWhatIsSet) {
  auto names = [](const optim::Chain& ch) {
    std::vector<std::string> n;
    for (const auto& t : ch) n.push_back(t.name);
    return n;
  };
  optim::OptimConfig c;
  EXPECT_EQ(names(optim::default_chain(c)), Slots{});
  c.freeze = {"stem"};
  c.grad_clip_norm = 1;
  c.weight_decay = 0.5;
  c.head_lr_mult = 2;
  EXPECT_EQ(names(optim::default_chain(c)),
            (Slots{"freeze", "clip_by_global_norm", "decay_mask", "head_lr"}));
  c.grad_clip_norm = 0;
  c.head_lr_mult = 1;
  EXPECT_EQ(names(optim::default_chain(c)), (Slots{"freeze", "decay_mask"}));
}

// stem.weight (layer 0), head.weight and head.bias (layer 1, the head; the bias does not decay).
ParamTable chain_table() {
  ParamTable t;
  t.params = {{"stem.weight", {2}, ParamInit::linearWeight, true, 0},
              {"head.weight", {3}, ParamInit::linearWeight, true, 1},
              {"head.bias", {2}, ParamInit::zeros, false, 1}};
  return t;
}

// New parameters after one plain-SGD step (lr 0.1) through `chain`.
std::vector<Tensor> sgd_through(const optim::Chain& chain, const optim::OptimConfig& c,
                                const std::vector<Tensor>& p, const std::vector<Tensor>& g) {
  const ParamTable t = chain_table();
  hlo::Module m;
  m.name = "chain";
  std::vector<hlo::Type> types;
  for (const auto& v : {p, g})
    for (const Tensor& x : v) types.push_back(hlo::Type::tensor(DType::kF32, x.shape()));
  types.push_back(hlo::Type::tensor(DType::kF32, {}));
  types.push_back(hlo::Type::tensor(DType::kI32, {}));
  hlo::Func* f = m.add_func("main", types);
  hlo::Builder b(f->body.get());
  optim::UpdateResult u =
      optim::apply_update(b, c, t, {f->arg(0), f->arg(1), f->arg(2)},
                          {f->arg(3), f->arg(4), f->arg(5)}, {}, f->arg(6), f->arg(7), chain);
  b.func_return(u.params);
  std::vector<Tensor> in = p;
  in.insert(in.end(), g.begin(), g.end());
  in.push_back(Tensor::scalar_f32(0.1f));
  in.push_back(Tensor::from<int>(DType::kI32, {}, {1}));
  return run_main(m, in);
}

Tensor f32(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from<float>(DType::kF32, {n}, v);
}

void expect_values(const Tensor& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  for (size_t j = 0; j < want.size(); ++j)
    EXPECT_NEAR(got.as_double(static_cast<int64_t>(j)), want[j], 1e-6) << what << " " << j;
}

TEST(OptimChain, TransformsComposeInOrderOnValues) {
  // sgd, lr 0.1: p -= lr·m·(g·coef + d·p) with coef = 1/(‖g‖ + 1e-6) (clip 1), d = 0.5 where the
  // parameter decays, m = 2 on the head. stem is frozen: g_stem = (3, 4) counts in the norm only
  // when the clip runs before the freeze (‖g‖ = √(25 + 9) instead of ‖(1, 2, 2)‖ = 3).
  const std::vector<Tensor> p = {f32({1, 1}), f32({1, -1, 0.5f}), f32({0.25f, 0.5f})};
  const std::vector<Tensor> g = {f32({3, 4}), f32({1, 2, 2}), f32({0, 0})};
  optim::OptimConfig c;  // sgd without momentum: no state
  c.freeze = {"stem"};
  c.grad_clip_norm = 1;
  c.weight_decay = 0.5;
  c.head_lr_mult = 2;
  auto head_w = [](double norm) {
    std::vector<double> w = {1, -1, 0.5}, gw = {1, 2, 2}, out;
    for (size_t j = 0; j < 3; ++j)
      out.push_back(w[j] - 0.1 * 2 * (gw[j] / (norm + 1e-6) + 0.5 * w[j]));
    return out;
  };
  const optim::Chain freeze_first = {optim::freeze({"stem"}), optim::clip_by_global_norm(1),
                                     optim::decay_mask(0.5, true), optim::head_lr(2)};
  const optim::Chain clip_first = {optim::clip_by_global_norm(1), optim::freeze({"stem"}),
                                   optim::decay_mask(0.5, true), optim::head_lr(2)};
  for (const auto& [label, chain, norm] :
       {std::tuple{"freeze first", freeze_first, 3.0},
        std::tuple{"clip first", clip_first, std::sqrt(34.0)},
        std::tuple{"default chain", optim::default_chain(c), 3.0}}) {
    SCOPED_TRACE(label);
    std::vector<Tensor> out = sgd_through(chain, c, p, g);
    ASSERT_EQ(out.size(), 3u);
    expect_values(out[0], {1, 1}, "stem.weight (frozen)");
    expect_values(out[1], head_w(norm), "head.weight");
    expect_values(out[2], {0.25, 0.5}, "head.bias (zero gradient, no decay)");
  }
  // Without the decay mask's ParamDesc.decay test the bias decays too: 0.25 - 0.1·2·0.5·0.25.
  const optim::Chain all_decay = {optim::decay_mask(0.5, false), optim::head_lr(2)};
  std::vector<Tensor> out = sgd_through(all_decay, c, p, g);
  expect_values(out[2], {0.25 - 0.1 * 2 * 0.5 * 0.25, 0.5 - 0.1 * 2 * 0.5 * 0.5}, "head.bias");
  expect_values(out[0], {1 - 0.1 * (3 + 0.5), 1 - 0.1 * (4 + 0.5)}, "stem.weight (not head)");
}

// One reading of TrainConfig::freeze for the update, the trainer's check and the CLI's count:
// comma-separated prefixes, empty items dropped (an empty one would freeze every parameter).
TEST(OptimRegistry, FreezePrefixesSplitOnCommasAndDropEmptyItems) {
  EXPECT_EQ(optim::freeze_prefixes(""), Slots{});
  EXPECT_EQ(optim::freeze_prefixes("stem."), (Slots{"stem."}));
  EXPECT_EQ(optim::freeze_prefixes(",stem.,,layers.1,"), (Slots{"stem.", "layers.1"}));
  TrainConfig t;
  t.freeze = "a.,b";
  EXPECT_EQ(optim::OptimConfig::from_train(t).freeze, (Slots{"a.", "b"}));
  const Slots pre = optim::freeze_prefixes("stem.,layers.1");
  EXPECT_TRUE(optim::is_frozen("stem.weight", pre));
  EXPECT_TRUE(optim::is_frozen("layers.10.bias", pre));  // a prefix, not a layer index
  EXPECT_FALSE(optim::is_frozen("head.weight", pre));
  EXPECT_FALSE(optim::is_frozen("stem.weight", {}));
}

}  // namespace
}  // namespace netspec::emit::testing
