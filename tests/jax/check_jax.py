#!/usr/bin/env python3
"""The JAX emitter against netspec's own train step (docs/jax.md, tests/jax/run_jax.sh).

For each net: `netspec emit NET --jax` and `netspec emit NET --module train_step` at the same
batch; parameters from the program's init() go through a safetensors file (written here, read by
the program's load_checkpoint); jax.jit(train_step) and `netspec run` (cpu executor) take the same
params, a positive optimizer state, x, labels, lr, step = 5 and masks; the updated params, optimizer
state, loss and BN batch statistics must agree: max|jax - netspec| <= tol * max|netspec| per
tensor (a state tensor that is all zeros in both passes). Also (--jax-text) JAX's own lowering of
train_step, `jax.jit(train_step).lower(...).as_text()`, run through `netspec run` must equal
JAX's result: the two systems read each other's output.
"""
import argparse
import importlib.util
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np

import jax
import jax.numpy as jnp

# Nets with a looser tolerance, and why (every other net: 1e-5).
TOLERANCE = {}


def sh(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a, np.float32)
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        blobs.append(a.tobytes())
        off += a.nbytes
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


STEP = 5


def well_conditioned_state(state):
    """Optimizer state |N(0, 1e-3)| (positive: valid second moments) instead of zeros. From zero
    state Adam's first update is g / (|g| + eps): elements whose gradient is ~0 (dead ReLUs) flip
    between 0 and +-1 on rounding noise, which says nothing about the gradients."""
    keys = jax.random.split(jax.random.PRNGKey(3), max(len(state), 1))
    return {n: 1e-3 * jnp.abs(jax.random.normal(k, v.shape, v.dtype))
            for k, (n, v) in zip(keys, sorted(state.items()))}


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def net_arg(net, root, work, shrink):
    """The zoo name, or a copy of its spec at a smaller input when --shrink asks and it emits."""
    if not shrink or net not in shrink:
        return net
    spec = json.load(open(os.path.join(root, "models", net + ".json")))
    spec["inputHeight"] = spec["inputWidth"] = shrink[net]
    path = os.path.join(work, f"{net}-{shrink[net]}.json")
    json.dump(spec, open(path, "w"))
    return path


def rel_err(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = np.max(np.abs(b)) if b.size else 0.0
    d = np.max(np.abs(a - b)) if b.size else 0.0
    return d / scale if scale > 0 else d


def check_net(args, net, work):
    t0 = time.time()
    spec = net_arg(net, args.root, work, args.shrink)
    py, mlir = os.path.join(work, f"{net}.py"), os.path.join(work, f"{net}.mlir")
    sh([args.netspec, "emit", spec, "--jax", "--batch", str(args.batch), "-o", py])
    sh([args.netspec, "emit", spec, "--module", "train_step", "--batch", str(args.batch), "-o", mlir])
    man = json.load(open(mlir[:-5] + ".manifest.json"))
    m = load_module(py, "net_" + net.replace("-", "_"))

    # netspec weights through a safetensors checkpoint, read back by the emitted loader.
    ckpt = os.path.join(work, f"{net}.safetensors")
    write_safetensors(ckpt, {k: np.asarray(v) for k, v in m.init(jax.random.PRNGKey(0)).items()})
    params, state, _ = m.load_checkpoint(ckpt)
    x, labels = m.synthetic_batch(jax.random.PRNGKey(1))
    masks = m.synthetic_masks(jax.random.PRNGKey(2))
    state = well_conditioned_state(state)
    lr, step = np.float32(0.01), np.int32(STEP)

    feed = {"param": params, "optimizer_state": state, "mask": masks}
    inputs = []
    for k, e in enumerate(man["inputs"]):
        if e["role"] in feed:
            v = feed[e["role"]][e["name"]]
        else:
            v = {"x": x, "labels": labels, "lr": lr, "step": step}[e["name"]]
        p = os.path.join(work, f"in{k}.npy")
        np.save(p, np.asarray(v))
        inputs += ["--input", p]
    out_dir = os.path.join(work, "out")
    t1 = time.time()
    sh([args.netspec, "run", mlir, "--output-dir", out_dir] + inputs)
    t2 = time.time()
    jp, js, jl, jst = jax.jit(m.train_step)(params, state, x, labels, lr, step, masks)
    jl = jax.block_until_ready(jl)
    t3 = time.time()
    got = {"param": jp, "optimizer_state": js, "bn_batch_stat": jst}
    tol = TOLERANCE.get(net, (args.tol, ""))[0]
    worst = {}
    for k, e in enumerate(man["outputs"]):
        ours = np.load(os.path.join(out_dir, f"result{k}.npy"))
        theirs = jl if e["role"] == "loss" else got[e["role"]][e["name"]]
        err = rel_err(theirs, ours)
        if not np.all(np.isfinite(np.asarray(theirs))) or not np.all(np.isfinite(ours)):
            err = float("inf")
        if err > worst.get(e["role"], (-1, ""))[0]:
            worst[e["role"]] = (err, e["name"])
    ok = all(w[0] <= tol for w in worst.values())
    summary = ", ".join(f"{r} {w[0]:.1e}" for r, w in sorted(worst.items()))
    print(f"{'ok  ' if ok else 'FAIL'} {net:26s} loss {float(jl):.5f}  {summary}  "
          f"(netspec {t2 - t1:.1f}s, jax {t3 - t2:.1f}s, total {time.time() - t0:.1f}s)", flush=True)
    if not ok:
        for r, w in worst.items():
            if w[0] > tol:
                print(f"     worst {r}: {w[1]} rel {w[0]:.3e} > {tol:g}")
    return ok


def check_jax_text(args, work):
    """JAX's lowering of the emitted mlp train_step, run by netspec: same results as JAX's."""
    py = os.path.join(work, "text_mlp.py")
    sh([args.netspec, "emit", "mlp", "--jax", "--batch", "8", "-o", py])
    m = load_module(py, "text_mlp")
    params = m.init(jax.random.PRNGKey(0))
    state = well_conditioned_state(m.init_state(params))
    x, labels = m.synthetic_batch(jax.random.PRNGKey(1))
    call = (params, state, x, labels, np.float32(0.01), np.int32(STEP))
    text = jax.jit(m.train_step).lower(*call).as_text()
    path = os.path.join(work, "jax_train_step.mlir")
    open(path, "w").write(text)
    inputs = []
    for k, v in enumerate(jax.tree_util.tree_leaves(call)):
        p = os.path.join(work, f"t{k}.npy")
        np.save(p, np.asarray(v))
        inputs += ["--input", p]
    out_dir = os.path.join(work, "text_out")
    sh([args.netspec, "run", path, "--output-dir", out_dir] + inputs)
    want = jax.tree_util.tree_leaves(jax.jit(m.train_step)(*call))
    worst = max(rel_err(np.load(os.path.join(out_dir, f"result{k}.npy")), w)
                for k, w in enumerate(want))
    ok = worst <= args.tol and len(os.listdir(out_dir)) == len(want)
    print(f"{'ok  ' if ok else 'FAIL'} jax-lowered mlp train_step through `netspec run`: "
          f"{len(want)} results, worst rel {worst:.1e}", flush=True)
    return ok


def check_reference(args, zoo, model, work):
    """Eval forward of the emitted program == torchvision's logits (tools/torchvision_reference.py:
    random weights, randomised BN statistics, 2x3x64x64, 10 classes) within 1e-4 * max|ref|."""
    ref = os.path.join(work, "ref")
    root = os.path.abspath(args.root)
    sh(["/usr/bin/python3", os.path.join(root, "tools", "torchvision_reference.py"), "--model",
        model, "--classes", "10", "--batch", "2", "--size", "64", "--seed", "0", "--out", ref])
    spec = json.load(open(os.path.join(root, "models", zoo + ".json")))
    spec["inputHeight"] = spec["inputWidth"] = 64
    spec_path = os.path.join(work, zoo + "-ref.json")
    json.dump(spec, open(spec_path, "w"))
    py = os.path.join(work, "ref_net.py")
    sh([args.netspec, "emit", spec_path, "--jax", "--classes", "10", "--batch", "2", "-o", py])
    m = load_module(py, "ref_" + zoo.replace("-", "_"))
    t = m.load_safetensors(os.path.join(ref, "weights.safetensors"))  # state_dict order
    stat = [k for k in t if k.endswith((".running_mean", ".running_var"))]
    par = [k for k in t if k not in stat]
    names = [p[0] for p in m.PARAMS]
    assert len(par) == len(names), f"{len(par)} torchvision params, {len(names)} netspec params"
    params = {n: t[k] for n, k in zip(names, par)}
    running_names = [b[0] + s for b in m.BNS for s in (".running_mean", ".running_var")]
    running = {n: t[k] for n, k in zip(running_names, stat)}
    x = np.load(os.path.join(ref, "input.npy"))
    want = np.load(os.path.join(ref, "logits.npy"))
    got = np.asarray(jax.jit(m.forward_eval)(params, running, x))
    err = np.max(np.abs(got - want))
    ok = err <= 1e-4 * np.max(np.abs(want))
    print(f"{'ok  ' if ok else 'FAIL'} {zoo:26s} eval logits vs torchvision {model}: max|d| {err:.2e}"
          f" (max|ref| {np.max(np.abs(want)):.2f})", flush=True)
    return ok


def torchvision_available():
    r = subprocess.run(["/usr/bin/python3", "-c", "import torch, torchvision"], capture_output=True)
    return r.returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--netspec", required=True)
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--work", required=True)
    ap.add_argument("--nets", default="mlp")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("--shrink", default="", help="net=size,...: input size for heavy nets")
    ap.add_argument("--jax-text", action="store_true")
    ap.add_argument("--reference", default="", help="zoo=torchvision_model,...")
    args = ap.parse_args()
    args.shrink = {k: int(v) for k, v in (s.split("=") for s in args.shrink.split(",") if s)}
    os.makedirs(args.work, exist_ok=True)
    failed = []
    if args.jax_text:
        try:
            if not check_jax_text(args, args.work):
                failed.append("jax-text")
        except Exception as e:  # report and go on with the nets
            print(f"FAIL jax-text: {e}")
            failed.append("jax-text")
    refs = [r.split("=") for r in args.reference.split(",") if r]
    if refs and not torchvision_available():
        print("skip reference checks: /usr/bin/python3 has no torch/torchvision")
        refs = []
    for zoo, model in refs:
        work = os.path.join(args.work, "ref-" + zoo)
        os.makedirs(work, exist_ok=True)
        try:
            if not check_reference(args, zoo, model, work):
                failed.append("reference " + zoo)
        except Exception as e:
            print(f"FAIL reference {zoo}: {str(e)[-2000:]}", flush=True)
            failed.append("reference " + zoo)
    for net in [n for n in args.nets.split(",") if n]:
        work = os.path.join(args.work, net)
        os.makedirs(work, exist_ok=True)
        try:
            if not check_net(args, net, work):
                failed.append(net)
        except Exception as e:
            print(f"FAIL {net}: {str(e)[-2000:]}", flush=True)
            failed.append(net)
    print(f"{len(failed)} failed: {', '.join(failed)}" if failed else "all passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
