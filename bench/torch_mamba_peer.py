#!/usr/bin/python3
# PyTorch peer of the zoo's mamba-lm (models/mamba-lm.json): token embedding, 4 Mamba blocks
# (dim 128, expand 2, state 16, conv 4), final LayerNorm, bias-free head (532,736 params); one
# full train step (forward + token cross-entropy + backward + grad-norm clip 1.0 + Adam, weight
# decay 0.1 on the matrices) on random tokens, median ms/step. The mixer is mamba_ssm's
# Mamba.forward without its CUDA kernels (causal depthwise conv1d, x_proj, dt_proj, the selective
# scan as a Python loop over t, as its selective_scan_ref), on [b, l, d] activations.
# Same fair settings as ../shared/peers/run.sh; run right after
# `netspec bench mamba-lm --batch 32 --optimizer adam` (same run, same load).
#   OMP_WAIT_POLICY=passive /usr/bin/python3 bench/torch_mamba_peer.py --batch 32
import argparse, math, statistics, time

import torch
import torch.nn as nn
import torch.nn.functional as F

ap = argparse.ArgumentParser()
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--seq", type=int, default=128)
ap.add_argument("--steps", type=int, default=10)
ap.add_argument("--warmup", type=int, default=2)
ap.add_argument("--threads", type=int, default=2)
a = ap.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)

VOCAB, DIM, N, EXPAND, BLOCKS, KCONV = 256, 128, 16, 2, 4, 4


def selective_scan(u, delta, A, B, C, D, z, delta_bias):
    # u, delta, z: [b, l, d]; A: [d, n]; B, C: [b, l, n]. mamba_ssm's selective_scan_ref, with
    # the per-step operands taken by unbind (its backward is one stack) and exp(Δ_t A) formed
    # per step: the reference's [b, d, l, n] precomputation indexed per step makes autograd
    # scatter each step's gradient into a zeroed [b, d, l, n] tensor (minutes per step here).
    delta = F.softplus(delta + delta_bias)
    x = A.new_zeros((u.shape[0], A.shape[0], A.shape[1]))
    ys = []
    for dt, dut, bt, ct in zip(delta.unbind(1), (delta * u).unbind(1), B.unbind(1), C.unbind(1)):
        x = torch.exp(dt[:, :, None] * A) * x + dut[:, :, None] * bt[:, None, :]
        ys.append(torch.einsum("bdn,bn->bd", x, ct))
    y = torch.stack(ys, dim=1)
    return (y + u * D) * F.silu(z)


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        di, r = EXPAND * DIM, math.ceil(DIM / 16)
        self.di, self.r = di, r
        self.in_proj = nn.Linear(DIM, 2 * di, bias=False)
        self.conv1d = nn.Conv1d(di, di, KCONV, groups=di, padding=KCONV - 1)
        self.x_proj = nn.Linear(di, r + 2 * N, bias=False)
        self.dt_proj = nn.Linear(r, di)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, N + 1).float()).repeat(di, 1))
        self.D = nn.Parameter(torch.ones(di))
        self.out_proj = nn.Linear(di, DIM, bias=False)

    def forward(self, h):
        L = h.shape[1]
        x, z = self.in_proj(h).chunk(2, dim=-1)  # [b, l, di] each
        x = F.silu(self.conv1d(x.transpose(1, 2))[..., :L]).transpose(1, 2)
        dt, B, C = torch.split(self.x_proj(x), [self.r, N, N], dim=-1)
        dt = dt @ self.dt_proj.weight.t()  # bias added in the scan
        y = selective_scan(x, dt, -torch.exp(self.A_log), B, C, self.D, z, self.dt_proj.bias)
        return self.out_proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.mixer = Mixer()

    def forward(self, x):
        return x + self.mixer(self.norm(x))


class MambaLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList(Block() for _ in range(BLOCKS))
        self.norm_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, ids):
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm_f(x))


model = MambaLM().train()
decay = [p for p in model.parameters() if p.dim() >= 2]
rest = [p for p in model.parameters() if p.dim() < 2]
opt = torch.optim.Adam([{"params": decay, "weight_decay": 0.1}, {"params": rest}], lr=3e-4)
ids = torch.randint(0, VOCAB, (a.batch, a.seq))
target = torch.randint(0, VOCAB, (a.batch, a.seq))
times = []
for i in range(a.warmup + a.steps):
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(ids).reshape(-1, VOCAB), target.reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    loss.item()
    if i >= a.warmup:
        times.append((time.perf_counter() - t0) * 1e3)
params = sum(p.numel() for p in model.parameters())
print(f"torch mamba-lm ({params} params) batch {a.batch}: ms/step median "
      f"{statistics.median(times):.1f} min {min(times):.1f} max {max(times):.1f} (n={a.steps})")
