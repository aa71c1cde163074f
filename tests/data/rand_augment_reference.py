#!/usr/bin/python3
"""timm RandAugment / AutoAugment('original') on given draws.

Usage: rand_augment_reference.py AUTO_AUGMENT_PY DIR. AUTO_AUGMENT_PY: timm/data/auto_augment.py
(loaded alone). DIR/in.npy uint8 [3, H, W]; DIR/cases.json: [{"config": "rand-m9-n2-mstd0.5" or
"original", "indices", "uniforms", "gausses"}]: numpy's choice, random.random and random.gauss
are patched to return netspec's draws in call order; NEAREST, fill 128. Writes DIR/out{k}.npy.
"""
import importlib.util
import json
import random
import sys

import numpy as np
from PIL import Image

spec = importlib.util.spec_from_file_location("timm_aa", sys.argv[1])
aa = importlib.util.module_from_spec(spec)
spec.loader.exec_module(aa)
D = sys.argv[2]
a = np.load(f"{D}/in.npy")
im = Image.fromarray(np.ascontiguousarray(a.transpose(1, 2, 0)), "RGB")
hp = {"interpolation": Image.NEAREST, "img_mean": (128, 128, 128), "translate_const": 250}
for k, c in enumerate(json.load(open(f"{D}/cases.json"))):
    idx, us, gs = iter(c["indices"]), iter(c["uniforms"]), iter(c["gausses"])
    np.random.choice = lambda ops, n, replace=True, p=None: [ops[next(idx)] for _ in range(n)]
    random.random = lambda: next(us)
    random.gauss = lambda mu, sigma: next(gs)
    random.choice = lambda seq: seq[next(idx)]
    if c["config"] == "original":
        t = aa.auto_augment_transform("original", dict(hp))
    else:
        t = aa.rand_augment_transform(c["config"], dict(hp))
    o = np.asarray(t(im)).transpose(2, 0, 1)
    np.save(f"{D}/out{k}.npy", np.ascontiguousarray(o))
    assert next(us, None) is None and next(gs, None) is None, "draws left over"
