#!/usr/bin/python3
"""timm RepeatAugSampler (one replica) on a given permutation.

Usage: repeated_aug_reference.py SAMPLER_PY DIR. SAMPLER_PY: timm/data/distributed_sampler.py
(loaded alone). DIR/cases.json: [{"perm": [...], "k": K}]; writes DIR/rows{i}.json, the sampler's
indices with torch.randperm patched to return perm.
"""
import importlib.util
import json
import sys

import torch

spec = importlib.util.spec_from_file_location("timm_sampler", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
D = sys.argv[2]
for i, c in enumerate(json.load(open(f"{D}/cases.json"))):
    torch.randperm = lambda n, generator=None, perm=c["perm"]: torch.tensor(perm)
    s = mod.RepeatAugSampler(list(range(len(c["perm"]))), num_replicas=1, rank=0, shuffle=True,
                             num_repeats=c["k"])
    json.dump(list(iter(s)), open(f"{D}/rows{i}.json", "w"))
