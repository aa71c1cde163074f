#!/usr/bin/env python3
"""The JAX emitter against netspec's own train step (docs/jax.md, tests/jax/run_jax.sh).

For each net: `netspec emit NET --jax` and `netspec emit NET --module train_step` at the same
batch; parameters from the program's init() (constant ones moved) go through a safetensors file
(written here, read by the program's load_checkpoint); jax.jit(train_step) and `netspec run`
(cpu executor) take the same params, a positive optimizer state, x, labels, lr, step = 5 and
masks; the updated params, optimizer state, loss, BN batch statistics and the running-accuracy
count (from JAX's train-mode logits) must agree:
max|jax - netspec| <= tol * scale per tensor (compare()). f32 (tol 1e-5): tol widened to 3x
JAX's own sensitivity to a 1e-6 parameter perturbation where that is larger. --dtype f64 (both
sides emitted in f64, tol 1e-9): no widening; that is how the BN nets, ill-conditioned at batch 2,
are compared. A test option `_jaxgrad=1` (NET@_jaxgrad=1) sets the program's CUSTOM_VJP = False:
JAX differentiates flash attention's forward itself. --zoo: every zoo net is in the given sets and
emits a program that Python compiles. --jax-text: JAX's own
lowering of train_step (`jax.jit(train_step).lower(...).as_text()`) run through `netspec run`
must equal JAX's result, judged as check_net judges (compare()'s scale floor per result group,
tol widened to 3x JAX's own sensitivity): the two systems read each other's output. --reference: the eval
forward against torchvision's logits (tools/torchvision_reference.py).
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

def sh(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r


def write_safetensors(path, tensors, dtype=np.float32):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a, dtype)
        st = "F64" if a.dtype == np.float64 else "F32"
        header[name] = {"dtype": st, "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        blobs.append(a.tobytes())
        off += a.nbytes
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


STEP = 5


def psd_state(state, dtype):
    """Shampoo keeps its Gram matrices L, R in m, v (square weights): they must be PSD, so those
    get G·Gᵀ (scaled), the other slots the positive state below."""
    out = well_conditioned_state(state, dtype)
    for n, v in sorted(state.items()):
        if v.ndim == 2 and v.shape[0] == v.shape[1]:
            g = np.random.default_rng(len(n)).standard_normal(v.shape)
            out[n] = (1e-3 * (g @ g.T) / v.shape[0]).astype(dtype)
    return out


def well_conditioned_state(state, dtype=np.float32):
    """Optimizer state |N(0, 1e-3)| (positive: valid second moments) instead of zeros. From zero
    state Adam's first update is g / (|g| + eps): elements whose gradient is ~0 (dead ReLUs) flip
    between 0 and +-1 on rounding noise, which says nothing about the gradients."""
    rng = np.random.default_rng(3)  # numpy: eager JAX ops would compile once per shape
    return {n: (1e-3 * np.abs(rng.standard_normal(v.shape))).astype(dtype)
            for n, v in sorted(state.items())}


def perturbed(m, params):
    """Init params with the constant ones (BN / LayerNorm gamma 1, biases 0) drawn around their
    value (+ 0.05·N(0, 1)). At init a BN over a constant channel (a dead ReLU upstream) outputs
    exactly beta = 0, and the ReLU after it sits on its kink: the gradient there is a convention
    (netspec's maximum sends ties to x, JAX splits them 0.5/0.5, PyTorch gives 0), not a check."""
    rng = np.random.default_rng(4)
    out = {}
    dt = np.dtype(m.FLOAT)
    for name, shape, init, *_ in m.PARAMS:
        v = np.asarray(params[name], dt)
        if init in ("zeros", "ones"):
            v = v + (0.05 * rng.standard_normal(shape)).astype(dt)
        out[name] = v
    return out


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def net_arg(net, root, work, shrink):
    """The zoo name, or a copy of its spec at a smaller input (--shrink) or with TrainConfig
    fields set (`NET@optimizer=lamb;weightDecay=0.01`: values are JSON)."""
    zoo, _, train = net.partition("@")
    if zoo not in shrink and not train:
        return zoo
    # a zoo name, or a spec file's path (a test fixture such as tests/jax/gpt-causal-384.json)
    src = zoo if zoo.endswith(".json") else os.path.join(root, "models", zoo + ".json")
    spec = json.load(open(src))
    if zoo in shrink:
        spec["inputHeight"] = spec["inputWidth"] = shrink[zoo]
    for kv in filter(None, train.split(";")):
        k, v = kv.split("=")
        if k.startswith("_"):  # a test option, not a TrainConfig field
            continue
        try:
            spec.setdefault("train", {})[k] = json.loads(v)
        except json.JSONDecodeError:
            spec["train"][k] = v
    path = os.path.join(work, "spec.json")
    json.dump(spec, open(path, "w"))
    return path


def rel_err(a, b, floor=0.0):
    """max|a - b| over max|b| floored at `floor`."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = max(float(np.max(np.abs(b))) if b.size else 0.0, floor)
    d = float(np.max(np.abs(a - b))) if b.size else 0.0
    return d / scale if scale > 0 else d


def check_net(args, net, work):
    t0 = time.time()
    spec = net_arg(net, args.root, work, args.shrink)
    py, mlir = os.path.join(work, "net.py"), os.path.join(work, "train_step.mlir")
    dt = ["--dtype", args.dtype]
    sh([args.netspec, "emit", spec, "--jax", "--batch", str(args.batch), "-o", py] + dt)
    sh([args.netspec, "emit", spec, "--module", "train_step", "--batch", str(args.batch), "-o", mlir]
       + dt)
    man = json.load(open(mlir[:-5] + ".manifest.json"))
    m = load_module(py, "net_" + "".join(c if c.isalnum() else "_" for c in net))
    if "_jaxgrad=1" in net:  # JAX differentiates the custom-VJP functions' forwards itself
        m.CUSTOM_VJP = False
    fdt = np.dtype(m.FLOAT)

    # netspec weights through a safetensors checkpoint, read back by the emitted loader.
    ckpt = os.path.join(work, "init.safetensors")
    write_safetensors(ckpt, perturbed(m, jax.jit(m.init)(jax.random.PRNGKey(0))), fdt)
    params, state, _ = m.load_checkpoint(ckpt)
    x, labels = m.synthetic_batch(jax.random.PRNGKey(1))
    masks = m.synthetic_masks(jax.random.PRNGKey(2))
    state = psd_state(state, fdt) if "_state=psd" in net else well_conditioned_state(state, fdt)
    lr, step = fdt.type(0.01), np.int32(STEP)

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
    step_fn = jax.jit(m.train_step)
    jp, js, jl, jst = step_fn(params, state, x, labels, lr, step, masks)
    jl = jax.block_until_ready(jl)
    t3 = time.time()
    # The running-accuracy count (role metric, "correct": classifiers and per-pixel losses):
    # Σ [argmax over the class dim of JAX's train-mode logits = label].
    fwd = jax.jit(lambda p: m.forward(p, x, True, None, masks)[0])

    def correct_of(p):
        return np.int32(np.sum(np.argmax(np.asarray(fwd(p)), axis=1) == np.asarray(labels)))

    metric = (lambda p: {"correct": correct_of(p)}) if any(
        e["role"] == "metric" for e in man["outputs"]) else (lambda p: {})
    got = {"param": jp, "optimizer_state": js, "bn_batch_stat": jst, "metric": metric(params)}
    ours = [np.load(os.path.join(out_dir, f"result{k}.npy")) for k in range(len(man["outputs"]))]
    worst = compare(man, ours, jl, got)
    # The function's own conditioning: JAX again with every parameter moved by 1e-6 relative
    # (a few f32 ulps, the size of rounding differences between two implementations; f64: 1e-13).
    rng = np.random.default_rng(5)
    eps = 1e-13 if fdt == np.float64 else 1e-6
    moved = {k: np.asarray(v) * (1 + eps * rng.standard_normal(v.shape)).astype(fdt)
             for k, v in params.items()}
    mp, ms, ml, mst = step_fn(moved, state, x, labels, lr, step, masks)
    moved_got = {"param": mp, "optimizer_state": ms, "bn_batch_stat": mst, "metric": metric(moved)}
    mine = [np.asarray(ml if e["role"] == "loss" else moved_got[e["role"]][e["name"]])
            for e in man["outputs"]]
    sens = compare(man, mine, jl, got)
    # Pass: within args.tol, or (f32, an ill-conditioned net) within 3x JAX's own sensitivity.
    f64 = fdt == np.float64
    tol = {r: args.tol if f64 else max(args.tol, 3 * sens[r][0]) for r in worst}
    ok = all(worst[r][0] <= tol[r] for r in worst)
    summary = ", ".join(f"{r} {w[0]:.1e}" + (f" (self {sens[r][0]:.1e})" if f64 or tol[r] > args.tol
                                              else "") for r, w in sorted(worst.items()))
    print(f"{'ok  ' if ok else 'FAIL'} {net:32s} loss {float(jl):.5f}  {summary}  "
          f"(netspec {t2 - t1:.1f}s, jax {t3 - t2:.1f}s, total {time.time() - t0:.1f}s)", flush=True)
    if not ok:
        for r, w in worst.items():
            if w[0] > tol[r]:
                print(f"     worst {r}: {w[1]} rel {w[0]:.3e} > {tol[r]:.1e} (max|d| {w[2]:.3e}, "
                      f"max|netspec| {w[3]:.3e})")
    return ok


def compare(man, ours, loss, got):
    """Worst error per role of `ours` (one array per manifest output) against JAX's results.
    A tensor is judged against its own scale floored at 1% of its role's largest: values that
    vanish mathematically (a BN batch mean after a linear 1x1 conv of BN-normalised channels,
    the gradient reaching such a BN's bias) are rounding noise in both systems."""
    pairs = []
    for e, o in zip(man["outputs"], ours):
        theirs = np.asarray(loss if e["role"] == "loss" else got[e["role"]][e["name"]], np.float64)
        pairs.append((e, np.asarray(o, np.float64), theirs))
    role_max = {}
    for e, o, _ in pairs:
        role_max[e["role"]] = max(role_max.get(e["role"], 0.0), float(np.max(np.abs(o))))
    worst = {}
    for e, o, theirs in pairs:
        scale = max(float(np.max(np.abs(o))), 0.01 * role_max[e["role"]])
        d = float(np.max(np.abs(theirs - o)))
        err = d / scale if scale > 0 else d
        if not np.all(np.isfinite(theirs)) or not np.all(np.isfinite(o)):
            err = float("inf")
        if err > worst.get(e["role"], (-1, ""))[0]:
            worst[e["role"]] = (err, e["name"], d, float(np.max(np.abs(o))))
    return worst


def check_jax_text(args, work, net, batch):
    """JAX's lowering of the emitted train_step (jax.jit(train_step).lower(...).as_text()), run by
    `netspec run`: the same results as JAX's own. mlp also runs the program's __main__."""
    py = os.path.join(work, f"text_{net}.py")
    sh([args.netspec, "emit", net, "--jax", "--batch", str(batch), "-o", py])
    if net == "mlp":  # __main__: a few steps on synthetic data, the loss printed and falling
        r = sh([sys.executable, py, "3"])
        losses = [float(l.split()[-1]) for l in r.stdout.splitlines() if l.startswith("step ")]
        if len(losses) != 3 or not all(np.isfinite(losses)) or not losses[-1] < losses[0]:
            print(f"FAIL python {py} 3: {r.stdout!r}")
            return False
        print(f"ok   python net.py 3 (mlp): loss {losses[0]:.4f} -> {losses[-1]:.4f}", flush=True)
    m = load_module(py, "text_" + net.replace("-", "_"))
    params = jax.jit(m.init)(jax.random.PRNGKey(0))
    state = well_conditioned_state(m.init_state(params))
    x, labels = m.synthetic_batch(jax.random.PRNGKey(1))
    call = (params, state, x, labels, np.float32(0.01), np.int32(STEP))
    text = jax.jit(m.train_step).lower(*call).as_text()
    path = os.path.join(work, f"jax_{net}_train_step.mlir")
    open(path, "w").write(text)
    inputs = []
    for k, v in enumerate(jax.tree_util.tree_leaves(call)):
        p = os.path.join(work, f"t{k}.npy")
        np.save(p, np.asarray(v))
        inputs += ["--input", p]
    out_dir = os.path.join(work, f"text_out_{net}")
    sh([args.netspec, "run", path, "--output-dir", out_dir] + inputs)
    step_fn = jax.jit(m.train_step)
    # Per top-level result (params, optimizer state, loss, batch statistics) as check_net's roles:
    # each tensor against its own scale floored at 1% of its group's largest (compare()).
    groups = [jax.tree_util.tree_leaves(g) for g in step_fn(*call)]
    want = [w for g in groups for w in g]
    ours = [np.load(os.path.join(out_dir, f"result{k}.npy")) for k in range(len(want))]
    floors = [0.01 * max(float(np.max(np.abs(w))) for w in g) for g in groups for _ in g]
    errs = [rel_err(o, w, f) for o, w, f in zip(ours, want, floors)]
    # And as check_net: within args.tol, or within 3x JAX's own change when every parameter moves
    # by 1e-6 relative (BN nets at batch 2 are ill-conditioned in f32).
    rng = np.random.default_rng(5)
    moved = jax.tree_util.tree_map(
        lambda v: np.asarray(v) * (1 + 1e-6 * rng.standard_normal(np.shape(v))).astype(
            np.asarray(v).dtype), params)
    self_moved = jax.tree_util.tree_leaves(step_fn(moved, *call[1:]))
    tols = [max(args.tol, 3 * rel_err(s, w, f)) for s, w, f in zip(self_moved, want, floors)]
    ok = all(e <= t for e, t in zip(errs, tols)) and len(os.listdir(out_dir)) == len(want)
    k = int(np.argmax([e / t for e, t in zip(errs, tols)]))
    print(f"{'ok  ' if ok else 'FAIL'} jax-lowered {net} train_step through `netspec run`: "
          f"{len(want)} results, worst rel {max(errs):.1e} (result {k}: {errs[k]:.1e} "
          f"of {tols[k]:.1e} allowed)", flush=True)
    return ok


def timm_package():
    """The oracle venv's timm package directory (this script runs in that venv), or None."""
    found = importlib.util.find_spec("timm")
    return list(found.submodule_search_locations)[0] if found else None


def check_reference(args, zoo, model, work):
    """Eval forward of the emitted program == torchvision's / timm's logits
    (tools/torchvision_reference.py: random weights, randomised BN statistics, 2x3x64x64,
    10 classes; timm models also get 0.05·N(0, 1) on every parameter, as
    tests/emit/reference_timm_test.cpp) within 1e-4 * max|ref|. Weights pair by state_dict order."""
    ref = os.path.join(work, "ref")
    root = os.path.abspath(args.root)
    spec = json.load(open(os.path.join(root, "models", zoo + ".json")))
    extra = []
    if model.startswith("timm:"):
        extra = ["--timm-path", timm_package(), "--perturb", "0.05"]
        first = spec["layers"][0]
        if first["kind"] == "patchEmbed":  # ViT: timm's img_size=64, 16 patches
            first["nPatches"] = (64 // first["patch"]) ** 2
            extra += ["--timm-arg", "img_size=64"]
    sh(["/usr/bin/python3", os.path.join(root, "tools", "torchvision_reference.py"), "--model",
        model, "--classes", "10", "--batch", "2", "--size", "64", "--seed", "0", "--out", ref]
       + extra)
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
    print(f"{'ok  ' if ok else 'FAIL'} {zoo:26s} eval logits vs {model}: max|d| {err:.2e}"
          f" (max|ref| {np.max(np.abs(want)):.2f})", flush=True)
    return ok


def check_zoo(args, work, tested):
    """Every zoo net (models/*.json) is in some test set (`tested`: the nets of light, more,
    heavy, f64) and emits a JAX program that Python compiles (syntax; no tracing)."""
    zoo = sorted(f[:-5] for f in os.listdir(os.path.join(args.root, "models")) if f.endswith(".json"))
    names = {n.partition("@")[0] for n in tested.split(",") if n}
    missing = [z for z in zoo if z not in names]
    bad = []
    for z in zoo:
        py = os.path.join(work, f"zoo_{z}.py")
        try:
            sh([args.netspec, "emit", z, "--jax", "--batch", "2", "-o", py])
            compile(open(py).read(), py, "exec")
        except Exception as e:
            bad.append(f"{z}: {str(e)[-300:]}")
    ok = not missing and not bad
    print(f"{'ok  ' if ok else 'FAIL'} {len(zoo)} zoo nets emit and compile"
          + (f"; not in any test set: {missing}" if missing else "")
          + (f"; failed: {bad}" if bad else ""), flush=True)
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
    ap.add_argument("--dtype", default="f32", choices=["f32", "f64"])
    ap.add_argument("--tol", type=float, help="relative bound (default 1e-5 f32, 1e-9 f64)")
    ap.add_argument("--zoo", default="", help="nets of every test set: check the zoo is covered")
    ap.add_argument("--shrink", default="", help="net=size,...: input size for heavy nets")
    ap.add_argument("--jax-text", action="store_true")
    ap.add_argument("--reference", default="", help="zoo=torchvision_model,...")
    args = ap.parse_args()
    args.shrink = {k: int(v) for k, v in (s.split("=") for s in args.shrink.split(",") if s)}
    if args.tol is None:
        args.tol = 1e-9 if args.dtype == "f64" else 1e-5
    os.makedirs(args.work, exist_ok=True)
    failed = []
    if args.zoo and not check_zoo(args, args.work, args.zoo):
        failed.append("zoo")
    # JAX's own lowering of mlp (dot, reduce) and cifar-bn (convolution, reduce_window,
    # select_and_scatter, BN) through netspec's parser and cpu executor.
    for net, batch in [("mlp", 8), ("cifar-bn", 2)] if args.jax_text else []:
        try:
            if not check_jax_text(args, args.work, net, batch):
                failed.append("jax-text " + net)
        except Exception as e:  # report and go on with the nets
            print(f"FAIL jax-text {net}: {str(e)[-2000:]}")
            failed.append("jax-text " + net)
    refs = [r.split("=", 1) for r in args.reference.split(",") if r]
    if refs and not torchvision_available():
        print("skip reference checks: /usr/bin/python3 has no torch/torchvision")
        refs = []
    if any(m.startswith("timm:") for _, m in refs) and not timm_package():
        print("skip timm reference checks: no timm in this venv")
        refs = [(z, m) for z, m in refs if not m.startswith("timm:")]
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
        work = os.path.join(args.work, "".join(c if c.isalnum() or c in "-_" else "_" for c in net))
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
