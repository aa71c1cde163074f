// Sequence kinds waveNetBlock and mambaBlock: tiny token models pass gradcheck of the tokenCE
// train-step loss in f64 on ref and cpu; their forward equals a PyTorch reference written here
// from the papers (f64, Debian's torch); output t is unaffected by inputs after t (causality);
// the zoo nets emit every module and cpu train steps lower the loss.
#include "emit_test_util.h"
#include "torch_script.h"

namespace netspec::emit::testing {
namespace {

EmitOptions token_opts(int64_t batch = 2, DType dt = DType::kF32) {
  EmitOptions o;
  o.batch = batch;
  o.loss.kind = LossKind::tokenCE;
  o.dtype = dt;
  return o;
}

// ids [T] -> embed (vocab 5) -> `body` -> dense to 5 logits per position.
NetSpec token_net(const std::string& name, int64_t t, int64_t d, const Layer& body, int64_t out) {
  return NetBuilder(name)
      .input(static_cast<int>(t))
      .add(TokenPositionEmbed{5, static_cast<int>(t), static_cast<int>(d), true, true, false})
      .add(body)
      .add(Dense{static_cast<int>(out), 5})
      .build();
}

// The eval forward of `net` in f64 on ids [B, T] (logits [B, T, 5]).
Tensor forward_f64(const NetSpec& net, const std::vector<Tensor>& params, const Tensor& ids,
                   const std::string& backend = "ref") {
  Emitted e = emit_module(net, ModuleKind::eval, token_opts(ids.shape()[0], DType::kF64));
  std::vector<Tensor> in = params;
  in.push_back(ids);
  return run_main(*e.module, in, backend).at(0);
}

Tensor ids_tensor(int64_t b, int64_t t, uint64_t seed) {
  Tensor ids(DType::kI32, {b, t});
  for (int64_t i = 0; i < ids.numel(); ++i)
    ids.data<int32_t>()[i] = static_cast<int32_t>((i * 7 + seed * 3 + i * i) % 5);
  return ids;
}

// Changing ids after position p leaves the outputs at positions <= p unchanged (to the bit), and
// changes some later output.
void expect_causal(const NetSpec& net, int64_t t) {
  ParamTable pt = build_param_table(net);
  std::vector<Tensor> params = small_params(pt, DType::kF64, 0.5, 5);
  Tensor ids = ids_tensor(1, t, 1);
  Tensor y0 = forward_f64(net, params, ids);
  for (int64_t p = 0; p + 1 < t; ++p) {
    Tensor ids2 = ids.clone();
    for (int64_t j = p + 1; j < t; ++j) ids2.data<int32_t>()[j] = (ids.data<int32_t>()[j] + 1) % 5;
    Tensor y1 = forward_f64(net, params, ids2);
    int64_t v = y0.shape().back();
    double before = 0, after = 0;
    for (int64_t i = 0; i < t * v; ++i) {
      double d = std::abs(y0.as_double(i) - y1.as_double(i));
      (i / v <= p ? before : after) = std::max(i / v <= p ? before : after, d);
    }
    EXPECT_EQ(before, 0.0) << net.name << ": output <= " << p << " moved";
    EXPECT_GT(after, 1e-6) << net.name << ": outputs after " << p << " did not move";
  }
}

// ---- waveNetBlock ----

NetSpec tiny_wavenet() { return token_net("wavenet_case", 6, 3, WaveNetBlock{3, 4, 3}, 4); }

TEST(EmitWaveNet, TinyPassesGradcheckOnRefAndCpu) {
  expect_loss_grads(tiny_wavenet(), token_opts(), "ref", 5);
  expect_loss_grads(tiny_wavenet(), token_opts(), "cpu", 5);
}

TEST(EmitWaveNet, IsCausal) { expect_causal(tiny_wavenet(), 6); }

// torch: Conv1d(r, 2r, 2, dilation 2^i) on the input left-padded by 2^i, tanh·sigmoid gate,
// 1x1 residual and skip Conv1ds, relu(Σ skip), then the dense head.
TEST(EmitWaveNet, EqualsTorchReference) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  const int64_t t = 9, r = 3, sk = 4, n = 4;  // dilations 1, 2, 4, 8 over 9 steps
  NetSpec net = token_net("wavenet_ref", t, r, WaveNetBlock{3, 4, 4}, sk);
  ParamTable pt = build_param_table(net);
  std::vector<Tensor> in = small_params(pt, DType::kF64, 0.5, 21);
  Tensor ids = ids_tensor(2, t, 4);
  Tensor y = forward_f64(net, in, ids);
  std::vector<Tensor> args = in;
  Tensor idsf(DType::kF64, ids.shape());
  for (int64_t i = 0; i < ids.numel(); ++i) idsf.data<double>()[i] = ids.data<int32_t>()[i];
  args.push_back(idsf);
  std::string script = fmt::format(R"(
import torch.nn.functional as F
r, n, k = {}, {}, 0
emb = load(0); k = 1
x = emb[load({}).long()].transpose(1, 2)          # [B, r, T]
skip = 0
for i in range(n):
    wd, bd, wr, br, ws, bs = [load(k + j) for j in range(6)]; k += 6
    d = 2 ** i
    h = F.conv1d(F.pad(x, (d, 0)), wd, bd, dilation=d)
    z = torch.tanh(h[:, :r]) * torch.sigmoid(h[:, r:])
    skip = skip + F.conv1d(z, ws, bs)
    x = x + F.conv1d(z, wr, br)
out = torch.relu(skip).transpose(1, 2) @ load(k).T + load(k + 1)
save(0, out)
)",
                                   r, n, args.size() - 1);
  reference::expect_matches("wavenet", y, reference::run_torch_script(script, args).at(0), 1e-10);
}

// The zoo's wavenet from weights of ±0.3 (at ±0.05 the ten gated layers pass almost nothing to
// the skips and three steps barely move the loss).
TEST(EmitWaveNet, ZooNetEmitsEveryModuleAndTrains) {
  SpecFile sf = resolve_net("wavenet");
  expect_emits_every_module(sf.net, sf.train.value_or(TrainConfig{}), 2);
  expect_train_steps_lower_loss(sf.net, sf.train.value_or(TrainConfig{}), 2, 3e-3, 0.3);
}

// ---- mambaBlock ----

NetSpec tiny_mamba(int64_t t = 5, int blocks = 2, int keep_states_mib = 512) {
  return token_net(
      "mamba_case", t, 4,
      MambaBlock{.dim = 4, .stateSize = 3, .nBlocks = blocks, .keepStatesMiB = keep_states_mib}, 4);
}

TEST(EmitMamba, TinyPassesGradcheckOnRefAndCpu) {
  expect_loss_grads(tiny_mamba(), token_opts(), "ref", 5);
  expect_loss_grads(tiny_mamba(), token_opts(), "cpu", 5);
}

// keepStatesMiB: a train step whose states fit keeps them from its forward loop (one scan loop
// forward, one backward per block); keepStatesMiB 0 keeps none and the backward recomputes them
// (a third loop). Both gradients pass gradcheck; eval modules never keep states.
TEST(EmitMamba, KeptAndRecomputedStatesBothPassGradcheck) {
  auto whiles = [](const hlo::Module& m) {
    int n = 0;
    for (const auto& f : m.funcs)
      hlo::walk(*f->body, [&](const hlo::Op& op) { n += op.kind == hlo::OpKind::kWhile; });
    return n;
  };
  for (int keep_mib : {512, 0}) {
    NetSpec net = tiny_mamba(5, 2, keep_mib);
    SCOPED_TRACE(keep_mib);
    Emitted loss = emit_module(net, ModuleKind::loss, token_opts());
    autodiff::VjpOptions vo;
    vo.name = "loss_vjp";
    autodiff::vjp(*loss.module->find("main"), {0}, vo);
    EXPECT_EQ(whiles(*loss.module), keep_mib > 0 ? 1 + 2 : 1 + 2 * 2);  // the blocks share a callee
    EXPECT_EQ(loss.module->find("mamba_selective_scan_kept__5x2x8x3f32") != nullptr, keep_mib > 0);
    Emitted eval = emit_module(net, ModuleKind::eval, token_opts());
    EXPECT_EQ(whiles(*eval.module), 1);
    expect_loss_grads(net, token_opts(), "cpu", 5);
  }
  // A negative budget is refused by name.
  EXPECT_THROW(
      {
        try {
          emit_module(tiny_mamba(5, 1, -1), ModuleKind::loss, token_opts());
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("keepStatesMiB must be >= 0 (got -1)"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
}

TEST(EmitMamba, IsCausal) { expect_causal(tiny_mamba(7, 1), 7); }

// The mixer as a sequential loop over t in torch (f64), from the paper's equations.
TEST(EmitMamba, EqualsSequentialTorchReference) {
  NETSPEC_SKIP_WITHOUT_TORCHVISION();
  const int64_t t = 11;
  NetSpec net = tiny_mamba(t, 2);
  ParamTable pt = build_param_table(net);
  std::vector<Tensor> in = small_params(pt, DType::kF64, 0.5, 31);
  Tensor ids = ids_tensor(2, t, 2);
  for (const char* backend : {"ref", "cpu"}) {
    Tensor y = forward_f64(net, in, ids, backend);
    std::vector<Tensor> args = in;
    Tensor idsf(DType::kF64, ids.shape());
    for (int64_t i = 0; i < ids.numel(); ++i) idsf.data<double>()[i] = ids.data<int32_t>()[i];
    args.push_back(idsf);
    std::string script = fmt::format(R"(
import torch.nn.functional as F
k = 1
x = load(0)[load({}).long()]          # [B, T, dim]
def ln(v, w, b): return F.layer_norm(v, v.shape[-1:], w, b, 1e-5)
for blk in range(2):
    nw, nb, w_in, cw, cb, w_x, w_dt, b_dt, a_log, dvec, w_out = [load(k + j) for j in range(11)]
    k += 11
    u = ln(x, nw, nb)
    di, n = a_log.shape
    r = w_dt.shape[1]
    xz = u @ w_in.T
    xs, z = xz[..., :di], xz[..., di:]
    T = xs.shape[1]
    xs = F.conv1d(F.pad(xs.transpose(1, 2), (3, 0)), cw, cb, groups=di).transpose(1, 2)
    xs = F.silu(xs)
    dbc = xs @ w_x.T
    delta, Bm, Cm = dbc[..., :r], dbc[..., r:r + n], dbc[..., r + n:]
    dl = F.softplus(delta @ w_dt.T + b_dt)
    A = -torch.exp(a_log)
    h = torch.zeros(xs.shape[0], di, n)
    ys = []
    for s in range(T):
        h = torch.exp(dl[:, s, :, None] * A) * h + (dl[:, s] * xs[:, s])[:, :, None] * Bm[:, s, None, :]
        ys.append((h * Cm[:, s, None, :]).sum(-1) + dvec * xs[:, s])
    y = torch.stack(ys, 1) * F.silu(z)
    x = x + y @ w_out.T
x = ln(x, load(k), load(k + 1))
save(0, x @ load(k + 2).T + load(k + 3))
)",
                                     args.size() - 1);
    reference::expect_matches(std::string("mamba on ") + backend, y,
                              reference::run_torch_script(script, args).at(0), 1e-10);
  }
}

TEST(EmitMamba, ZooNetEmitsEveryModuleAndTrains) {
  SpecFile sf = resolve_net("mamba-lm");
  expect_emits_every_module(sf.net, sf.train.value_or(TrainConfig{}), 2);
  expect_train_steps_lower_loss("mamba-lm", 2);
}

}  // namespace
}  // namespace netspec::emit::testing
