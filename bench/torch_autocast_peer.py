#!/usr/bin/python3
"""torch_autocast_peer.py -- the PyTorch CPU peer's train step (../shared/peers/
torch_train_step.py: same models, batch, optimizer, random data) with the forward and loss
under torch.autocast('cpu', dtype=torch.bfloat16): bf16 matmuls and convolutions (oneDNN),
f32 master weights, no loss scaling; the backward runs outside the context, as documented.

    /usr/bin/python3 bench/torch_autocast_peer.py MODEL [--steps 30] [--warmup 5] [--threads 2]
        [--peer-dir DIR] [--f32]
Prints "MODEL autocast-bf16 ... ms/step median X" (or f32 with --f32, the same loop without
autocast, for the ratio side by side).
"""
import argparse, os, statistics, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("model"); ap.add_argument("--steps", type=int, default=30)
ap.add_argument("--warmup", type=int, default=5); ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--peer-dir", default=os.path.join(os.path.dirname(__file__), "../../shared/peers"))
ap.add_argument("--f32", action="store_true")
a = ap.parse_args()
sys.path.insert(0, a.peer_dir)
import torch
import torch.nn.functional as F
from torch_train_step import MODELS  # noqa: E402  the peer's own models and settings

torch.set_num_threads(a.threads)
ctor, shape, batch, opt_ctor = MODELS[a.model]
torch.manual_seed(0)
model = ctor(); model.train()
opt = opt_ctor(model.parameters())
x = torch.randn(batch, *shape); y = torch.randint(0, 10, (batch,))
times = []
for i in range(a.warmup + a.steps):
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=not a.f32):
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    loss_v = loss.item()
    if i >= a.warmup:
        times.append((time.perf_counter() - t0) * 1e3)
mode = "f32" if a.f32 else "autocast-bf16"
print(f"{a.model:9s} {mode} batch={batch} torch {torch.__version__} ms/step median "
      f"{statistics.median(times):8.2f}  min {min(times):8.2f}  max {max(times):8.2f}  "
      f"(n={a.steps}, last loss {loss_v:.3f})", flush=True)
