#!/usr/bin/python3
"""Reference Muon / Shampoo steps in PyTorch (f64), written from the published formulas.

Usage: matrix_opt_reference.py DIR. DIR/meta.json: {"kind", "lr", "momentum", "nesterov", "beta2",
"eps", "weight_decay", "steps", "params": [{"name", "shape", "decay", "linear_weight"}]}, DIR/p{i}.npy
the initial parameters, DIR/g{k}_{i}.npy the gradient of step k (1-based). Writes DIR/out{k}_{i}.npy,
the parameters after step k. Matrices: Muon on every 2-D linear weight (Keller Jordan's 5-step
Newton-Schulz, coefficients (3.4445, -4.7750, 2.0315), timm's lerp momentum and 0.2*sqrt(max(m, n))
scale); Shampoo on square 2-D linear weights >= 16 (EMA L, R with bias correction, inverse 4th roots
by eigendecomposition with ridge eps*tr/n). Everything else: torch.optim.AdamW.
"""
import json
import sys

import numpy as np
import torch

D = sys.argv[1]
meta = json.load(open(f"{D}/meta.json"))
kind = meta["kind"]
lr, mu, beta2, wd = meta["lr"], meta["momentum"], meta["beta2"], meta["weight_decay"]
SHAMPOO_EPS = 1e-4


def ns5(g):
    x = g.clone()
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T
    x = x / max(float(torch.linalg.norm(x)), 1e-7)
    a, b, c = 3.4445, -4.7750, 2.0315
    for _ in range(5):
        A = x @ x.T
        x = a * x + (b * A + c * A @ A) @ x
    return x.T if tall else x


def inv4(a):
    n = a.shape[0]
    a = a + (SHAMPOO_EPS * float(torch.trace(a)) / n + 1e-30) * torch.eye(n, dtype=a.dtype)
    w, q = torch.linalg.eigh(a)
    return q @ torch.diag(w.clamp(min=0) ** -0.25) @ q.T


params = [torch.tensor(np.load(f"{D}/p{i}.npy"), dtype=torch.float64) for i in range(len(meta["params"]))]
matrix = []
for d in meta["params"]:
    s = d["shape"]
    ok = len(s) == 2 and d["linear_weight"]
    if kind == "shampoo":
        ok = ok and s[0] == s[1] and s[0] >= 16
    matrix.append(ok)

fallback = [torch.nn.Parameter(p.clone()) for p, m in zip(params, matrix) if not m]
fb_decay = [d["decay"] for d, m in zip(meta["params"], matrix) if not m]
groups = [{"params": [p for p, dec in zip(fallback, fb_decay) if dec], "weight_decay": wd},
          {"params": [p for p, dec in zip(fallback, fb_decay) if not dec], "weight_decay": 0.0}]
adamw = torch.optim.AdamW([g for g in groups if g["params"]], lr=lr, betas=(mu, beta2),
                          eps=meta["eps"])
state = {i: (torch.zeros_like(p), torch.zeros_like(p)) for i, p in enumerate(params) if matrix[i]}

for k in range(1, meta["steps"] + 1):
    grads = [torch.tensor(np.load(f"{D}/g{k}_{i}.npy"), dtype=torch.float64) for i in range(len(params))]
    j = 0
    for i, p in enumerate(params):
        if not matrix[i]:
            fallback[j].grad = grads[i]
            j += 1
    adamw.step()
    j = 0
    for i, d in enumerate(meta["params"]):
        if not matrix[i]:
            params[i] = fallback[j].detach().clone()
            j += 1
            continue
        p, g = params[i], grads[i]
        dec = wd if d["decay"] else 0.0
        s0, s1 = state[i]
        if kind == "muon":
            s0 = mu * s0 + (1 - mu) * g
            u = (1 - mu) * g + mu * s0 if meta["nesterov"] else s0
            scale = 0.2 * max(p.shape) ** 0.5
            p = p * (1 - lr * dec) - lr * scale * ns5(u)
        else:
            s0 = beta2 * s0 + (1 - beta2) * g @ g.T
            s1 = beta2 * s1 + (1 - beta2) * g.T @ g
            bc = 1 - beta2 ** k
            p = p * (1 - lr * dec) - lr * inv4(s0 / bc) @ g @ inv4(s1 / bc)
        state[i] = (s0, s1)
        params[i] = p
    for i, p in enumerate(params):
        np.save(f"{D}/out{k}_{i}.npy", p.numpy())
