#!/usr/bin/python3
"""State dicts for `netspec convert`'s agreement test (tests/train/reference_convert_test.cpp).

  convert_reference.py JOBS.json OUT_DIR [--timm-path DIR] [--peer-file FILE]

JOBS.json: [{"name", "model", "classes", "timm_args": {...}, "manifest": PATH, "adjust": ""}].
For each job: builds the model (torchvision.models.<model>, timm:NAME or peer:NAME as
tools/torchvision_reference.py does), gives every float tensor of its state dict fresh random
values (running_var positive) so that no two tensors of equal shape agree, torch.saves the state
dict as OUT_DIR/<name>.pth, and writes what tools/torchvision_to_safetensors.py makes of it
(its `convert` against the job's eval manifest) as OUT_DIR/<name>.expected.safetensors.
adjust "aux" drops GoogLeNet's aux classifiers before the tool sees the state dict, "swin"
reorders timm's Swin as netspec has it (attn.relative_position_bias_table after attn.proj,
downsample.norm before downsample.reduction): the tool pairs by order alone, netspec's
converter finds both itself. Debian's /usr/bin/python3 (torch 1.13, torchvision 0.14).
"""
import argparse
import collections
import json
import os
import sys

import torch

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools")
sys.path.insert(0, TOOLS)
import torchvision_reference as ref  # noqa: E402
import torchvision_to_safetensors as tool  # noqa: E402


def swin_netspec_order(items):
    out, table, norm = [], None, []
    for k, v in items:
        if k.endswith("attn.relative_position_bias_table"):
            table = (k, v)
        elif ".downsample.norm." in k:
            norm.append((k, v))
        else:
            out.append((k, v))
            if table and k.endswith("attn.proj.bias"):
                out.append(table)
                table = None
            if norm and k.endswith("downsample.reduction.weight"):
                out.extend(norm)
                norm = []
    assert len(out) == len(items)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jobs")
    ap.add_argument("out")
    ap.add_argument("--timm-path")
    ap.add_argument("--peer-file", default=os.path.join(TOOLS, "..", "..", "shared", "peers",
                                                        "torch_train_step.py"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    with open(a.jobs) as f:
        jobs = json.load(f)
    for i, job in enumerate(jobs):
        args = argparse.Namespace(model=job["model"], classes=job["classes"], peer_file=a.peer_file,
                                  timm_path=a.timm_path,
                                  timm_arg=[f"{k}={v}" for k, v in job.get("timm_args", {}).items()])
        torch.manual_seed(i)
        model = ref.build_model(args)
        gen = torch.Generator().manual_seed(100 + i)
        sd = model.state_dict()
        with torch.no_grad():
            for k, v in sd.items():
                if v.is_floating_point():
                    v.copy_(torch.rand(v.shape, generator=gen) + 0.5 if k.endswith("running_var")
                            else torch.randn(v.shape, generator=gen))
        pth = os.path.join(a.out, job["name"] + ".pth")
        torch.save(sd, pth)
        state = tool.load_state_dict(pth)
        if job.get("adjust") == "aux":
            state = [(k, v) for k, v in state if not k.startswith(("aux1.", "aux2."))]
        elif job.get("adjust") == "swin":
            state = swin_netspec_order(state)
        with open(job["manifest"]) as f:
            inputs = json.load(f)["inputs"]
        tensors = tool.convert(state, inputs)
        ref.write_safetensors(os.path.join(a.out, job["name"] + ".expected.safetensors"), tensors)
        print(f"{job['name']}: {len(sd)} state-dict entries, {len(tensors)} netspec tensors")


if __name__ == "__main__":
    main()
