#!/usr/bin/python3
"""Reference logits from a torchvision model with random weights, for netspec's equality tests.

Builds torchvision.models.<model>(num_classes=N) (or timm's model with --model timm:NAME, or the
PyTorch peer's with --model peer:NAME), randomises it so that no normalisation layer is
the identity (BN/LayerNorm affine drawn at random, BN running statistics measured on random
batches in train mode and then perturbed, layer scales drawn in [0.1, 1]), switches to eval mode
and writes into --out:
  weights.safetensors  every parameter and BN running_mean/running_var, f32, torchvision names,
                       state_dict order (num_batches_tracked dropped)
  input.npy            the input x [batch, 3, size, size], f32
  logits.npy           the model's eval logits for x, computed in float64 from the same weights
                       (--f32-logits: in float32, for nets whose f64 CPU path is slow in torch 1.13)
Run with Debian's /usr/bin/python3 (torch 1.13, torchvision 0.14); timm is not in Debian, so
--timm-path names the timm package of the oracle venv (scripts/install-oracles.sh:
BUILD/venv/lib/python3.11/site-packages/timm), loaded by path alone: putting the venv's whole
site-packages on sys.path would shadow Debian's numpy 1.24 with the venv's numpy 2, which torch
1.13 cannot use. --check-import only imports the modules --model needs and exits 0 when they load
(the tests' availability check). The safetensors format is written by hand (torch 1.13 has no safetensors): 8-byte little-endian header length, JSON header,
raw little-endian data.
"""
import argparse
import ast
import importlib.util
import json
import os
import struct
import sys

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


def import_timm(path):
    """Imports the timm package at `path` (the package directory, or a site-packages directory
    holding timm/) without adding its site-packages to sys.path."""
    pkg = os.path.join(path, "timm") if os.path.isfile(os.path.join(path, "timm", "__init__.py")) else path
    init = os.path.join(pkg, "__init__.py")
    if not os.path.isfile(init):
        raise SystemExit(f"--timm-path {path}: no timm package there (no {init})")
    spec = importlib.util.spec_from_file_location("timm", init, submodule_search_locations=[pkg])
    timm = importlib.util.module_from_spec(spec)
    sys.modules["timm"] = timm  # before exec: timm's own `from timm.x import y` must find it
    spec.loader.exec_module(timm)
    return timm


def build_model(a):
    """The model named by --model, with a.classes classes."""
    if a.model.startswith("peer:"):
        spec = importlib.util.spec_from_file_location("torch_train_step", a.peer_file)
        peer = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(peer)
        return peer.MODELS[a.model[5:]][0](a.classes)
    if a.model.startswith("timm:"):
        if not a.timm_path:
            raise SystemExit("--model timm:NAME needs --timm-path (the oracle venv's timm package)")
        timm = import_timm(a.timm_path)
        kwargs = {k: ast.literal_eval(v) for k, v in (kv.split("=", 1) for kv in a.timm_arg)}
        return timm.create_model(a.model[5:], pretrained=False, num_classes=a.classes, **kwargs)
    return getattr(torchvision.models, a.model)(num_classes=a.classes)


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
    ap.add_argument("--out", help="output directory (created; required unless --check-import)")
    ap.add_argument("--f32-logits", action="store_true", help="reference logits in f32, not f64")
    ap.add_argument("--grad-cam", action="store_true",
                    help="also Grad-CAM in float64 at the avgpool input for each sample's top class: "
                         "gradcam.npy [B, h, w], classes.npy, features.npy, grads.npy")
    ap.add_argument("--save-pth", help="also torch.save the state dict here (converter tests)")
    ap.add_argument("--timm-path", help="timm package directory (or a site-packages holding "
                                         "timm/) for --model timm:NAME")
    ap.add_argument("--timm-arg", action="append", default=[], metavar="KEY=VALUE",
                    help="extra timm.create_model argument, VALUE a Python literal (img_size=64)")
    ap.add_argument("--perturb", type=float, default=0.0,
                    help="add PERTURB·N(0, 1) to every parameter before randomise() (nets whose "
                         "init leaves biases zero and tokens ~1e-6, e.g. timm's ViT)")
    ap.add_argument("--check-import", action="store_true",
                    help="only import what --model needs (timm: timm itself) and exit 0")
    a = ap.parse_args()
    if a.check_import:
        if a.model.startswith("timm:"):
            import_timm(a.timm_path or "")
        return
    if not a.out:
        ap.error("--out is required")
    torch.manual_seed(a.seed)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    gen = torch.Generator().manual_seed(a.seed)
    model = build_model(a)
    if a.perturb:
        with torch.no_grad():
            for p in model.parameters():
                p.add_(a.perturb * torch.randn(p.shape, generator=gen))
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
                      {"model": a.model, "classes": a.classes, "torchvision": torchvision.__version__,
                       "timm": getattr(sys.modules.get("timm"), "__version__", "")})
    np.save(os.path.join(a.out, "input.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(a.out, "logits.npy"), logits)
    if a.grad_cam:
        grad_cam(model.double(), x.double(), a.out)
    print(f"{a.model}: {len(weights)} tensors, logits {list(logits.shape)}, max|logit| {np.abs(logits).max():.4g}")


def grad_cam(model, x, out):
    """Grad-CAM as pytorch-grad-cam computes it (before resizing): A = the avgpool's input,
    alpha_c = mean_hw d(logit_K)/dA_c, cam = relu(sum_c alpha_c A_c), K = the top class."""
    seen = {}

    def keep(_module, inputs):
        inputs[0].retain_grad()
        seen["a"] = inputs[0]

    handle = model.avgpool.register_forward_pre_hook(keep)
    y = model(x)
    handle.remove()
    k = y.argmax(1)
    y.gather(1, k[:, None]).sum().backward()
    a, g = seen["a"], seen["a"].grad
    cam = torch.relu((g.mean((2, 3), keepdim=True) * a).sum(1))
    for name, v in (("gradcam", cam), ("features", a), ("grads", g)):
        np.save(os.path.join(out, name + ".npy"), v.detach().numpy())
    np.save(os.path.join(out, "classes.npy"), k.numpy().astype(np.int32))


if __name__ == "__main__":
    main()
