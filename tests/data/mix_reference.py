#!/usr/bin/python3
"""timm Mixup (mode 'batch') and torchvision RandomErasing on given random draws.

Usage: mix_reference.py DIR MIXUP_PY. MIXUP_PY: timm/data/mixup.py (loaded alone: it needs only
numpy and torch). DIR/x.npy [B, C, H, W], DIR/y.npy [B] i32, DIR/meta.json {"mix": [case...],
"erase": [case...]}. A mix case holds timm's Mixup arguments and the draws netspec made (u_prob,
u_switch, beta, cy, cx): np.random is patched to return them in the order timm asks. Writes
DIR/mix{k}_x.npy, DIR/mix{k}_t.npy. An erase case {"p", "u", "row"}: RandomErasing(p, value=0) on
sample `row` with torch.rand / empty().uniform_ / randint patched to netspec's uniforms u
(u[0] the p test, then per attempt scale, log ratio, i, j); writes DIR/erase{k}.npy.
"""
import importlib.util
import json
import sys

import numpy as np
import torch
from torchvision.transforms import RandomErasing

D, MIXUP_PY = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("timm_mixup", MIXUP_PY)
mixup = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mixup)
meta = json.load(open(f"{D}/meta.json"))
x0 = torch.tensor(np.load(f"{D}/x.npy"))
y0 = torch.tensor(np.load(f"{D}/y.npy")).long()

for k, c in enumerate(meta["mix"]):
    rands = iter([c["u_prob"], c["u_switch"]])
    ints = iter([c["cy"], c["cx"]])
    np.random.rand = lambda *a: next(rands)
    np.random.beta = lambda a, b, size=None: c["beta"]
    np.random.randint = lambda lo, hi, size=None: next(ints)
    m = mixup.Mixup(mixup_alpha=c["mixup_alpha"], cutmix_alpha=c["cutmix_alpha"], prob=c["prob"],
                    switch_prob=c["switch_prob"], mode="batch", correct_lam=True,
                    label_smoothing=c["smoothing"], num_classes=c["classes"])
    x, t = m(x0.clone(), y0.clone())
    np.save(f"{D}/mix{k}_x.npy", x.numpy())
    np.save(f"{D}/mix{k}_t.npy", t.float().numpy())

real_empty, real_rand, real_randint = torch.empty, torch.rand, torch.randint
for k, c in enumerate(meta["erase"]):
    u = c["u"]
    st = {"calls": 0}

    class FakeEmpty:
        def uniform_(self, lo, hi):
            n = st["calls"]
            st["calls"] += 1
            att, which = divmod(n, 2)
            return torch.tensor([lo + (hi - lo) * u[1 + 4 * att + which]], dtype=torch.float64)

    def fake_randint(lo, hi, size=None):
        att = st["calls"] // 2 - 1
        which = 2 + st.setdefault("ints", 0)
        st["ints"] += 1
        return torch.tensor([int(u[1 + 4 * att + which] * (hi - lo)) + lo])

    torch.empty = lambda *a, **kw: FakeEmpty() if a == (1,) else real_empty(*a, **kw)
    torch.rand = lambda *a, **kw: torch.tensor([u[0]])
    torch.randint = fake_randint
    img = x0[c["row"]].clone()
    out = RandomErasing(p=c["p"], value=0)(img)
    torch.empty, torch.rand, torch.randint = real_empty, real_rand, real_randint
    np.save(f"{D}/erase{k}.npy", out.numpy())
