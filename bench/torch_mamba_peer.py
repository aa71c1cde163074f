#!/usr/bin/python3
# PyTorch peer of the zoo's mamba-lm (models/mamba-lm.json): token embedding, 4 Mamba blocks
# (dim 128, expand 2, state 16, conv 4), final LayerNorm, bias-free head (532,736 params); one
# full train step (forward + token cross-entropy + backward + grad-norm clip 1.0 + Adam, weight
# decay 0.1 on the matrices) on random tokens, median ms/step. The mixer is mamba_ssm's Mamba.forward without
# its CUDA kernels, i.e. what the package runs on a CPU: causal depthwise conv1d, x_proj,
# dt_proj, and selective_scan_ref (exp(Δ A) and Δ B u built for all t, then a Python loop over t).
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


def selective_scan_ref(u, delta, A, B, C, D, z, delta_bias):
    # u, delta, z: [b, d, l]; A: [d, n]; B, C: [b, n, l] (mamba_ssm's reference, softplus on)
    delta = F.softplus(delta + delta_bias[..., None])
    x = A.new_zeros((u.shape[0], A.shape[0], A.shape[1]))
    delta_a = torch.exp(torch.einsum("bdl,dn->bdln", delta, A))
    delta_b_u = torch.einsum("bdl,bnl,bdl->bdln", delta, B, u)
    ys = []
    for i in range(u.shape[2]):
        x = delta_a[:, :, i] * x + delta_b_u[:, :, i]
        ys.append(torch.einsum("bdn,bn->bd", x, C[:, :, i]))
    y = torch.stack(ys, dim=2)
    return (y + u * D[:, None]) * F.silu(z)


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
        xz = self.in_proj(h).transpose(1, 2)  # [b, 2di, l]
        x, z = xz.chunk(2, dim=1)
        x = F.silu(self.conv1d(x)[..., :L])
        dbc = self.x_proj(x.transpose(1, 2))  # [b, l, r + 2n]
        dt, B, C = torch.split(dbc, [self.r, N, N], dim=-1)
        dt = (dt @ self.dt_proj.weight.t()).transpose(1, 2)  # bias added in the scan
        y = selective_scan_ref(x, dt, -torch.exp(self.A_log), B.transpose(1, 2),
                               C.transpose(1, 2), self.D, z, self.dt_proj.bias)
        return self.out_proj(y.transpose(1, 2))


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
