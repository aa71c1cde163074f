#!/usr/bin/python3
"""Reference logits from a torchvision model with random weights, for netspec's equality tests.

Builds torchvision.models.<model>(num_classes=N), randomises it so that no normalisation layer is
the identity (BN/LayerNorm affine drawn at random, BN running statistics measured on random
batches in train mode and then perturbed, layer scales drawn in [0.1, 1]), switches to eval mode
and writes into --out:
  weights.safetensors  every parameter and BN running_mean/running_var, f32, torchvision names,
                       state_dict order (num_batches_tracked dropped)
  input.npy            the input x [batch, 3, size, size], f32
  logits.npy           the model's eval logits for x, computed in float64 from the same weights
                       (--f32-logits: in float32, for nets whose f64 CPU path is slow in torch 1.13)
Run with Debian's /usr/bin/python3 (torch 1.13, torchvision 0.14); the safetensors format is
written by hand (torch 1.13 has no safetensors): 8-byte little-endian header length, JSON header,
raw little-endian data.
"""
import argparse
import json
import os
import struct

import numpy as np
import torch
import torchvision


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, np.ndarray f32) in file order."""
    header, offset, blobs = {}, 0, []
    for name, a in tensors:
        a = np.ascontiguousarray(a, dtype="<f4")
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)  # align the data to 8 bytes
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def state_tensors(model):
    """(name, f32 array) for every parameter and BN running stat, in state_dict order."""
    out = []
    for name, t in model.state_dict().items():
        if name.endswith("num_batches_tracked"):
            continue
        out.append((name, t.detach().cpu().float().numpy()))
    return out


def randomise(model, gen, size, calib_batches=1, calib_batch=8):
    norms = (torch.nn.BatchNorm2d, torch.nn.BatchNorm1d, torch.nn.LayerNorm, torch.nn.GroupNorm)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, norms):
                if getattr(m, "weight", None) is not None:
                    m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)  # U(0.5, 1.5)
                if getattr(m, "bias", None) is not None:
                    m.bias.copy_(0.2 * torch.randn(m.bias.shape, generator=gen))
        for name, p in model.named_parameters():
            if name.endswith("layer_scale"):  # ConvNeXt: 1e-6 at init would hide the branch
                p.copy_(0.1 + 0.9 * torch.rand(p.shape, generator=gen))
        # BN running stats: cumulative average over random batches (momentum None), then perturbed
        # so they differ from any batch's own statistics.
        bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
        for m in bns:
            m.reset_running_stats()
            m.momentum = None
        if bns:
            model.eval()  # only the BNs train: stochastic depth / dropout stay off, so the
            for m in bns:  # statistics are those the eval forward will see
                m.train()
            for _ in range(calib_batches):
                model(torch.randn(calib_batch, 3, size, size, generator=gen))
        for m in bns:
            # shift by 0.05 standard deviations (an absolute shift explodes near-constant channels)
            noise = torch.randn(m.running_mean.shape, generator=gen)
            m.running_mean.add_(0.05 * m.running_var.sqrt() * noise)
            m.running_var.mul_(0.95 + 0.1 * torch.rand(m.running_var.shape, generator=gen))
            m.momentum = 0.1
    model.eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True,
                    help="torchvision.models constructor, e.g. resnet18; peer:NAME builds NAME from "
                         "--peer-file's MODELS table (the PyTorch peer's nets, e.g. peer:resnet18)")
    ap.add_argument("--peer-file", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "..", "..", "shared", "peers", "torch_train_step.py"))
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--size", type=int, default=64, help="input height = width")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--f32-logits", action="store_true", help="reference logits in f32, not f64")
    ap.add_argument("--save-pth", help="also torch.save the state dict here (converter tests)")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    gen = torch.Generator().manual_seed(a.seed)
    if a.model.startswith("peer:"):
        import importlib.util
        spec = importlib.util.spec_from_file_location("torch_train_step", a.peer_file)
        peer = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(peer)
        model = peer.MODELS[a.model[5:]][0](a.classes)
    else:
        model = getattr(torchvision.models, a.model)(num_classes=a.classes)
    randomise(model, gen, a.size)
    x = torch.randn(a.batch, 3, a.size, a.size, generator=gen)
    weights = state_tensors(model)
    if a.save_pth:
        torch.save(model.state_dict(), a.save_pth)
    with torch.no_grad():
        if a.f32_logits:
            logits = model(x).double().numpy()
        else:
            logits = model.double()(x.double()).numpy()
    os.makedirs(a.out, exist_ok=True)
    write_safetensors(os.path.join(a.out, "weights.safetensors"), weights,
                      {"model": a.model, "classes": a.classes, "torchvision": torchvision.__version__})
    np.save(os.path.join(a.out, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(a.out, "logits.npy"), logits)
    print(f"{a.model}: {len(weights)} tensors, logits {list(logits.shape)}, max|logit| {np.abs(logits).max():.4g}")


if __name__ == "__main__":
    main()
