#!/usr/bin/python3
"""EMA / SWA weights by torch.optim.swa_utils.AveragedModel and BN statistics by update_bn.

Usage: averaging_reference.py DIR. DIR/meta.json: {"shapes", "updates", "ema_decay", "bn_batch"};
DIR/w{t}_{i}.npy the weights after update t (1-based); DIR/bn_x.npy images [N, C, H, W].
Writes DIR/ema_{i}.npy, DIR/swa_{i}.npy (averages after the last update) and DIR/bn_mean.npy,
DIR/bn_var.npy (a BatchNorm2d's running statistics after update_bn over batches of bn_batch).
EMA: avg_fn with timm ModelEmaV3's warmup decay min(D, 1 - (1 + n)^(-2/3)), n = models averaged.
"""
import json
import sys

import numpy as np
import torch
from torch.optim.swa_utils import AveragedModel, update_bn

D = sys.argv[1]
meta = json.load(open(f"{D}/meta.json"))
model = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(s, dtype=torch.float64))
                                for s in meta["shapes"]])
decay = meta["ema_decay"]


def ema_fn(avg, cur, n):
    d = min(decay, 1 - (1 + int(n)) ** (-2 / 3))
    return d * avg + (1 - d) * cur


ema = AveragedModel(model, avg_fn=ema_fn)
swa = AveragedModel(model)
for t in range(1, meta["updates"] + 1):
    with torch.no_grad():
        for i, p in enumerate(model):
            p.copy_(torch.tensor(np.load(f"{D}/w{t}_{i}.npy"), dtype=torch.float64))
    ema.update_parameters(model)
    swa.update_parameters(model)
for i, (e, s) in enumerate(zip(ema.module, swa.module)):
    np.save(f"{D}/ema_{i}.npy", e.detach().numpy())
    np.save(f"{D}/swa_{i}.npy", s.detach().numpy())

x = torch.tensor(np.load(f"{D}/bn_x.npy"), dtype=torch.float64)
bn = torch.nn.BatchNorm2d(x.shape[1]).double()
loader = [x[i:i + meta["bn_batch"]] for i in range(0, x.shape[0], meta["bn_batch"])]
update_bn(loader, bn)
np.save(f"{D}/bn_mean.npy", bn.running_mean.numpy())
np.save(f"{D}/bn_var.npy", bn.running_var.numpy())
