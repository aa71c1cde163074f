#!/usr/bin/python3
# PyTorch peer for torchvision architectures that ../shared/peers/run.sh does not cover: one full
# train step (forward + cross-entropy + backward + SGD-momentum step) of torchvision.models.NAME
# (1000 classes unless --classes) on random data, median ms/step, with the same fair settings as run.sh. Run it
# right after `netspec bench NET --input CxHxW --batch B --optimizer sgd` (same run, same load).
#   OMP_WAIT_POLICY=passive /usr/bin/python3 bench/torchvision_peer.py mobilenet_v2 --input 3x32x32 --batch 32
# (on an AVX-512 CPU also OPENBLAS_CORETYPE=SkylakeX, which Debian 12's OpenBLAS misdetects;
# never on an AVX2-only CPU: SIGILL; docs/install.md)
import argparse, statistics, time

import torch
import torch.nn.functional as F
import torchvision

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("--input", default="3x32x32")
ap.add_argument("--batch", type=int, default=32)
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--warmup", type=int, default=3)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--classes", type=int, default=1000)
a = ap.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)
model = getattr(torchvision.models, a.model)(num_classes=a.classes)
model.train()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
shape = [int(v) for v in a.input.split("x")]
x = torch.randn(a.batch, *shape)
y = torch.randint(0, 10, (a.batch,))
times = []
for i in range(a.warmup + a.steps):
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    loss.item()
    if i >= a.warmup:
        times.append((time.perf_counter() - t0) * 1e3)
print(f"torch {a.model} {a.input} batch {a.batch}: ms/step median {statistics.median(times):.1f} "
      f"min {min(times):.1f} max {max(times):.1f} (n={a.steps})")
