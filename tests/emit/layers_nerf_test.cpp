// nerfMLP: a tiny NeRF MLP (on an already encoded input) passes gradcheck of an MSE loss in f64 on
// ref and cpu, and equals nerf-pytorch's NeRF.forward written here in torch at equal weights.
#include "emit_test_util.h"
#include "torch_script.h"

namespace netspec::emit::testing {
namespace {

NetSpec tiny_nerf(int pos = 5, int dir = 3, int hidden = 6) {
  return NetBuilder("nerf_case").input(pos + dir).add(NerfMlp{pos, dir, hidden}).build();
}

TEST(EmitNerf, TinyPassesGradcheckOnRefAndCpu) {
  EmitOptions o;
  o.batch = 3;
  o.loss.kind = LossKind::floatTargetMse;
  expect_loss_grads(tiny_nerf(), o, "ref");
  expect_loss_grads(tiny_nerf(), o, "cpu");
}

TEST(EmitNerf, EqualsNerfPytorchForward) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  NetSpec net = tiny_nerf(7, 5, 8);
  ParamTable t = build_param_table(net);
  std::vector<Tensor> in = small_params(t, DType::kF64, 0.5, 13);
  Tensor x = random_tensor(hlo::Type::tensor(DType::kF64, {4, 12}), 2);
  EmitOptions o;
  o.batch = 4;
  o.dtype = DType::kF64;
  Emitted e = emit_module(net, ModuleKind::forward, o);
  std::vector<Tensor> args = in;
  args.push_back(x);
  Tensor y = run_main(*e.module, args).at(0);
  // nerf-pytorch run_nerf_helpers.NeRF.forward with use_viewdirs, skips = [4]
  std::string script = R"(
import torch.nn.functional as F
P = [load(i) for i in range(24)]
lin = lambda v, i: v @ P[2 * i].T + P[2 * i + 1]
x = load(24)
pts, views = x[:, :7], x[:, 7:]
h = pts
for i in range(8):
    h = F.relu(lin(h, i))
    if i == 4:
        h = torch.cat([pts, h], -1)
alpha = lin(h, 8)
feature = lin(h, 9)
h = F.relu(lin(torch.cat([feature, views], -1), 10))
save(0, torch.cat([lin(h, 11), alpha], -1))
)";
  reference::expect_matches("nerf mlp", y, reference::run_torch_script(script, args).at(0), 1e-10);
}

}  // namespace
}  // namespace netspec::emit::testing
