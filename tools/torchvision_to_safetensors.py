#!/usr/bin/python3
"""Convert a torchvision state dict (.pth) into a netspec safetensors weight file.

  tools/torchvision_to_safetensors.py resnet18.pth resnet18.safetensors --net resnet18 \
      [--classes 1000] [--netspec build/main/netspec | --manifest eval.manifest.json]

The netspec names come from the net's eval-module manifest (`netspec emit NET --module eval`):
its `param` inputs in ParamTable order, then `bn_running_stat` inputs (running_mean,
running_var per BN). The state dict's parameters (every tensor except BN running stats and
num_batches_tracked) pair with the `param` entries in order, its running stats with the
`bn_running_stat` entries in order; every shape must be equal, the counts must be equal, and each
BN's running stats must come from the module whose weight paired with that BN's gamma
(docs/reference-weights.md). The output holds the tensors under netspec names (f32), the layout
of a netspec checkpoint's params + running stats (loadable by `netspec train` / eval).
Only Debian's python3 with torch is needed (torch 1.13 has no safetensors: written by hand).
`netspec convert FILE.pth --net NET` does the same in C++ without Python (and also reads timm's
Swin order and name-sorted safetensors files); tests/train/reference_convert_test.cpp checks that
both give the same tensors.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchvision_reference import write_safetensors  # noqa: E402

STATS = (".running_mean", ".running_var")


def manifest_inputs(a):
    if a.manifest:
        with open(a.manifest) as f:
            return json.load(f)["inputs"]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "eval.mlir")
        cmd = [a.netspec, "emit", a.net, "--module", "eval", "-o", out]
        if a.classes:
            cmd += ["--classes", str(a.classes)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(d, "eval.manifest.json")) as f:
            return json.load(f)["inputs"]


def load_state_dict(path):
    sd = torch.load(path, map_location="cpu")
    for key in ("state_dict", "model"):
        if isinstance(sd, dict) and key in sd and isinstance(sd[key], dict):
            sd = sd[key]
    if isinstance(sd, torch.nn.Module):
        sd = sd.state_dict()
    return [(k, v) for k, v in sd.items() if not k.endswith("num_batches_tracked")]


def convert(state, inputs):
    """[(netspec name, f32 array)] in netspec order; raises ValueError on any mismatch."""
    params = [e for e in inputs if e["role"] == "param"]
    stats = [e for e in inputs if e["role"] == "bn_running_stat"]
    t_params = [(k, v) for k, v in state if not k.endswith(STATS)]
    t_stats = [(k, v) for k, v in state if k.endswith(STATS)]
    if len(t_params) != len(params):
        raise ValueError(f"parameter count (got {len(t_params)} torchvision tensors, expected {len(params)} netspec params)")
    if len(t_stats) != len(stats):
        raise ValueError(f"BN running stats (got {len(t_stats)} torchvision tensors, expected {len(stats)})")
    out, torch_of = [], {}
    for i, ((tname, t), p) in enumerate(zip(t_params, params)):
        if list(t.shape) != list(p["shape"]):
            raise ValueError(f"param {i} {p['name']} <- {tname}: shape (got {list(t.shape)}, expected {p['shape']})")
        torch_of[p["name"]] = tname
        out.append((p["name"], t.detach().float().numpy()))
    for (tname, t), s in zip(t_stats, stats):
        suffix = ".running_mean" if s["name"].endswith(".running_mean") else ".running_var"
        if not tname.endswith(suffix):
            raise ValueError(f"{s['name']} <- {tname}: running stats out of order")
        bn, module = s["name"][: -len(suffix)], tname[: -len(suffix)]
        if torch_of.get(bn + ".weight") != module + ".weight":
            raise ValueError(f"BN {bn}: gamma came from {torch_of.get(bn + '.weight')}, running stats from {module}")
        if list(t.shape) != list(s["shape"]):
            raise ValueError(f"{s['name']} <- {tname}: shape (got {list(t.shape)}, expected {s['shape']})")
        out.append((s["name"], t.detach().float().numpy()))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pth", help="torchvision state dict (torch.save(model.state_dict(), ...))")
    ap.add_argument("out", help="output .safetensors")
    ap.add_argument("--net", help="netspec zoo name or spec .json (with --netspec)")
    ap.add_argument("--classes", type=int, help="classifier width (as `netspec emit --classes`)")
    ap.add_argument("--netspec", default="netspec", help="the netspec binary")
    ap.add_argument("--manifest", help="an eval-module manifest instead of running netspec")
    a = ap.parse_args()
    if not a.manifest and not a.net:
        ap.error("give --net (and --netspec) or --manifest")
    try:
        tensors = convert(load_state_dict(a.pth), manifest_inputs(a))
    except ValueError as e:
        sys.exit(f"[torchvision_to_safetensors] {e}")
    write_safetensors(a.out, tensors, {"source": os.path.basename(a.pth), "net": a.net or ""})
    print(f"wrote {len(tensors)} tensors to {a.out}")


if __name__ == "__main__":
    main()
