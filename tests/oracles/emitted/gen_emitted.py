#!/usr/bin/env python3
"""Makes oracle cases from emitted modules: for each net x module, runs
`netspec emit NET --module M --batch B -o CASE.mlir` and writes deterministic inputs
CASE.in<i>.npy shaped from CASE.manifest.json, plus CASE.json with the tolerance.

Inputs by manifest role: params N(0,1)/sqrt(fan_in) (1-D params 0.1·N), optimizer state
0.01·(1+|N|) (non-negative, so Adam's v / RMSprop's ms are valid), BN running means 0.1·N and
variances 1+0.1·|N|, inputs / cotangents N(0,1), gradients 0.1·N, class-id labels uniform in
[0, classes), float labels one-hot rows, lr = 1 and step = 3. lr = 1 makes a train step's
parameter change the whole update (P' = P - u for sgd), so an error in its fused backward shows
in P' at full size instead of scaled down by a small learning rate.

Tolerance (f32): |x - cpu| <= 1e-4 + 1e-4·|cpu| elementwise. The engines sum dot products,
convolutions and reductions in different orders (blocked, vectorised), so results differ by a few
ulps of each partial sum; 1e-4 covers that for these sizes (fan-in <= 784, batch 2) and is far
below any real bug (a wrong op, layout, or dropped term moves results by > 1e-2). Measured on
jaxlib 0.10.2 / IREE 3.13 (llvm-cpu, host): the worst |x - cpu| / (1e-4 + 1e-4·|cpu|) over all
cases is about 0.05 (mlp train_step with lamb on XLA; mnist-cnn vjp on IREE next), i.e. about
20x headroom.

Conditioning: every case's result must be a continuous function of its inputs (see
PERTURB_EPS below); a case drawn at a max-pool tie or a ReLU kink draws new inputs.

Usage: gen_emitted.py --netspec BIN --out DIR [--nets a,b] [--modules m,n] [--batch B]
       [--no-conditioning] [--report]
       gen_emitted.py --self-test
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

NETS = ("linear", "mlp", "mnist-cnn", "cifar-bn")
MODULES = ("forward", "eval", "cam", "train_step", "vjp", "optimizer")
# Optimizer variants: each runs the optimizer and train_step modules of EXTRA_OPT_NET.
EXTRA_OPTIMIZERS = ("sgd", "adam", "rmsprop", "lamb")
EXTRA_OPT_NET = "mlp"
# Training-config variants: (case suffix, zoo net, modules, "train" overrides, emit flags). They
# cover momentum / nesterov, AdamW with decay exclusion, global-norm clipping and a head LR
# multiplier, RMSprop and LAMB with decay, each loss with a float or smoothed target, and the
# generic printer form.
VARIANTS = (
    ("sgd_plain", "cifar-bn", ("train_step",), {"optimizer": "sgd", "momentum": 0.0}, []),
    ("sgd_nesterov", "cifar-bn", ("train_step", "optimizer"),
     {"optimizer": "sgd", "momentum": 0.9, "nesterov": True}, []),
    ("adamw_clip_head", "cifar-bn", ("train_step", "optimizer"),
     {"optimizer": "adam", "weightDecay": 0.05, "wdExcludeNormBias": True, "gradClipNorm": 0.5,
      "headLrMult": 10.0}, []),
    ("rmsprop_wd", "cifar-bn", ("train_step",),
     {"optimizer": "rmsprop", "weightDecay": 1e-3, "wdExcludeNormBias": False}, []),
    ("lamb_wd", "cifar-bn", ("train_step", "optimizer"),
     {"optimizer": "lamb", "weightDecay": 0.01}, []),
    ("smooth", "mlp", ("train_step",), {"labelSmoothing": 0.1}, []),
    ("softlabel", "mlp", ("train_step",), {"lossKind": "softLabelCE"}, []),
    ("bce", "mlp", ("train_step",), {"lossKind": "bce"}, []),
    ("mse", "mlp", ("train_step",), {"lossKind": "floatTargetMse"}, []),
    ("generic", "cifar-bn", ("train_step", "forward"), {}, ["--generic"]),
)
MODELS_DIR = Path(__file__).resolve().parents[3] / "models"
RTOL = ATOL = 1e-4
# Conditioning: a case judges the engines only where its result is a continuous function of its
# inputs. A max-pool window whose two largest values, or a ReLU input, lie within rounding
# distance of each other flips with the summation order (cifar-bn's LAMB step at lr 1 moved
# 83 of 864 weights by up to 5.8e-4 between engines; an RMSprop draw that 2 of 8 perturbations
# miss moved 552 of them by up to 3.6e-3: four runs, not two), so a case must pass this check, on whatever
# CPU it is generated: netspec's cpu results for PERTURB_RUNS copies of the float inputs, each
# element scaled by 1 ± PERTURB_EPS (8 f32 ulps), stay within COND_FRACTION of the tolerance of the
# unperturbed results. Otherwise the case draws new inputs (seed "stem#k"), at most MAX_DRAWS.
PERTURB_EPS = 2.0**-20
PERTURB_RUNS = 4
COND_FRACTION = 0.25
MAX_DRAWS = 8
OPTIONS = {"conditioning": True, "report": False}  # set from the command line
PERTURBED_ROLES = ("param", "optimizer_state", "bn_running_stat", "input", "cotangent",
                   "gradient")
DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i1": np.bool_,
          "i32": np.int32, "i64": np.int64}


def seed_of(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


def make_input(e: dict, classes: int, rng: np.random.Generator) -> np.ndarray:
    shape, dt, role, name = tuple(e["shape"]), np.dtype(DTYPES[e["dtype"]]), e["role"], e["name"]
    n = lambda: rng.standard_normal(size=shape)  # noqa: E731
    if role == "param":
        if len(shape) >= 2:
            fan_in = int(np.prod(shape[1:]))
            v = n() / np.sqrt(fan_in)
        else:
            v = 0.1 * n()
    elif role == "optimizer_state":
        v = 0.01 * (1 + np.abs(n()))
    elif role == "bn_running_stat":
        v = 1 + 0.1 * np.abs(n()) if "var" in name else 0.1 * n()
    elif role in ("input", "cotangent"):
        v = n()
    elif role == "gradient":
        v = 0.1 * n()
    elif role == "label":
        if dt.kind in "iu":
            v = rng.integers(0, classes, size=shape)
        else:  # one-hot rows over the last axis (softLabelCE / bce / mse targets)
            ids = rng.integers(0, shape[-1], size=shape[:-1])
            v = np.eye(shape[-1])[ids]
    elif role == "hyperparameter":
        if dt.kind in "iu":
            v = np.full(shape, 3)  # step: the third update (bias correction in play)
        else:
            v = np.full(shape, 1.0)  # lr
    else:
        raise ValueError(f"[gen_emitted] input {name}: unknown role {role!r}")
    return np.asarray(v).astype(dt)


def run_cpu(netspec: Path, mlir: Path, inputs: list[Path], out: Path) -> list[np.ndarray]:
    out.mkdir(parents=True, exist_ok=True)
    for f in out.glob("result*.npy"):
        f.unlink()
    cmd = [str(netspec), "run", str(mlir), "--backend", "cpu", "--output-dir", str(out)]
    for p in inputs:
        cmd += ["--input", str(p)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"netspec run failed: {(r.stderr or r.stdout).strip()[-2000:]}")
    files = sorted(out.glob("result*.npy"), key=lambda p: int(p.stem[len("result"):]))
    return [np.load(f) for f in files]


def sensitivity(got: list[np.ndarray], want: list[np.ndarray]) -> float:
    """max |got - want| / (ATOL + RTOL·|want|) over float results (NaN meets NaN); inf when an
    integer result or a NaN / inf pattern differs."""
    worst = 0.0
    for g, w in zip(got, want):
        if w.dtype.kind != "f":
            if not np.array_equal(g, w):
                return np.inf
            continue
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        fin = np.isfinite(w64)
        if not np.array_equal(fin, np.isfinite(g64)) or not np.array_equal(g64[~fin], w64[~fin],
                                                                           equal_nan=True):
            return np.inf
        if fin.any():
            d = np.abs(g64[fin] - w64[fin]) / (ATOL + RTOL * np.abs(w64[fin]))
            worst = max(worst, float(d.max()))
    return worst


def self_test() -> int:
    """sensitivity() on hand-made results: 0 when equal, the budget ratio otherwise."""
    f = np.array([1.0, -2.0, 0.0])
    checks = [
        (sensitivity([f], [f]), 0.0),
        # |0.5e-4| / (1e-4 + 1e-4·2) = 1/6 at element 1
        (sensitivity([f + np.array([0, 0.5e-4, 0])], [f]), 1 / 6),
        (sensitivity([np.array([1, 2], np.int32)], [np.array([1, 3], np.int32)]), np.inf),
        (sensitivity([np.array([np.nan, 1], np.float32)], [np.array([np.nan, 1], np.float32)]), 0),
        (sensitivity([np.array([np.inf], np.float32)], [np.array([1.0], np.float32)]), np.inf),
    ]
    bad = [(i, got, want) for i, (got, want) in enumerate(checks)
           if not (got == want or abs(got - want) <= 1e-3 * abs(want))]
    for i, got, want in bad:
        print(f"FAIL self-test {i}: sensitivity {got} (expected {want})")
    return 1 if bad else 0


def conditioning(netspec: Path, mlir: Path, manifest: dict, inputs: list[np.ndarray],
                 rng: np.random.Generator) -> float:
    """The worst sensitivity() of PERTURB_RUNS perturbed runs against the unperturbed one."""
    work = mlir.parent / "_conditioning" / mlir.stem
    files = [mlir.parent / f"{mlir.stem}.in{i}.npy" for i in range(len(inputs))]
    base = run_cpu(netspec, mlir, files, work / "base")
    worst = 0.0
    for k in range(PERTURB_RUNS):
        pfiles = []
        for i, (e, x) in enumerate(zip(manifest["inputs"], inputs)):
            if x.dtype.kind == "f" and e["role"] in PERTURBED_ROLES:
                signs = rng.choice(np.array([-1.0, 1.0]), size=x.shape)
                x = (x.astype(np.float64) * (1 + PERTURB_EPS * signs)).astype(x.dtype)
            pfiles.append(work / f"p{k}.in{i}.npy")
            np.save(pfiles[-1], x)
        worst = max(worst, sensitivity(run_cpu(netspec, mlir, pfiles, work / f"p{k}"), base))
    return worst


def emit(netspec: Path, net: str, module: str, batch: int, out: Path, optimizer: str | None,
         extra=()):
    cmd = [str(netspec), "emit", net, "--module", module, "--batch", str(batch), "-o", str(out)]
    if optimizer:
        cmd += ["--optimizer", optimizer]
    cmd += list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return f"exit {r.returncode}: {(r.stderr or r.stdout).strip()[-2000:]}"
    return None


def num_classes(netspec: Path, net: str, batch: int, tmp: Path) -> int:
    """Classes = the forward module's logits width (the last dim of output 0)."""
    f = tmp / f"_classes_{Path(net).stem}.mlir"
    err = emit(netspec, net, "forward", batch, f, None)
    if err:
        return 2
    m = json.loads(f.with_suffix(".manifest.json").read_text())
    f.unlink()
    f.with_suffix(".manifest.json").unlink()
    return int(m["outputs"][0]["shape"][-1])


def make_case(netspec, net, module, batch, out: Path, classes, optimizer=None, suffix=None,
              extra=()) -> str | None:
    name = Path(net).stem if net.endswith(".json") else net
    stem = f"{name}__{module}" + (f"__{suffix or optimizer}" if suffix or optimizer else "")
    mlir = out / f"{stem}.mlir"
    err = emit(netspec, net, module, batch, mlir, optimizer, extra)
    if err and module == "cam" and "has no globalAvgPool" in err:
        print(f"n/a  {stem}: {err}")  # cam needs a globalAvgPool; its refusal is by design
        return None
    if err:
        return f"{stem}: netspec emit failed: {err}"
    manifest = json.loads(mlir.with_suffix(".manifest.json").read_text())
    tried = []
    for draw in range(MAX_DRAWS):
        rng = np.random.default_rng(seed_of(stem if draw == 0 else f"{stem}#{draw}"))
        inputs = [make_input(e, classes, rng) for e in manifest["inputs"]]
        for i, x in enumerate(inputs):
            np.save(out / f"{stem}.in{i}.npy", x)
        if not OPTIONS["conditioning"]:
            break
        try:
            worst = conditioning(netspec, mlir, manifest, inputs, rng)
        except RuntimeError as e:
            return f"{stem}: {e}"
        tried.append(f"{worst:.3g}")
        if OPTIONS["report"]:
            print(f"sensitivity {stem} draw {draw}: {worst:.3g} of the tolerance")
        if worst <= COND_FRACTION:
            break
    else:
        return (f"{stem}: ill-conditioned for all {MAX_DRAWS} input draws (perturbed results moved "
                f"by {', '.join(tried)} of the tolerance; at most {COND_FRACTION} allowed)")
    if len(tried) > 1:
        print(f"redrawn {stem}: sensitivity {' -> '.join(tried)} of the tolerance")
    meta = {"rtol": RTOL, "atol": ATOL}
    (out / f"{stem}.json").write_text(json.dumps(meta) + "\n")
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    if "--self-test" in sys.argv[1:]:
        return self_test()
    ap.add_argument("--netspec", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--nets", default=",".join(NETS))
    ap.add_argument("--modules", default=",".join(MODULES))
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--no-optimizer-variants", action="store_true",
                    help=f"skip the {EXTRA_OPT_NET} x {{{','.join(EXTRA_OPTIMIZERS)}}} cases")
    ap.add_argument("--no-variants", action="store_true", help="skip the VARIANTS cases")
    ap.add_argument("--no-conditioning", action="store_true",
                    help="skip the perturbation check (inputs of draw 0 only)")
    ap.add_argument("--report", action="store_true", help="print every case's sensitivity")
    a = ap.parse_args()
    OPTIONS.update(conditioning=not a.no_conditioning, report=a.report)
    a.out.mkdir(parents=True, exist_ok=True)
    errors, n = [], 0
    nets = [s for s in a.nets.split(",") if s]
    modules = [s for s in a.modules.split(",") if s]
    for net in nets:
        classes = num_classes(a.netspec, net, a.batch, a.out)
        for module in modules:
            n += 1
            if err := make_case(a.netspec, net, module, a.batch, a.out, classes):
                errors.append(err)
    if not a.no_optimizer_variants and EXTRA_OPT_NET in nets:
        classes = num_classes(a.netspec, EXTRA_OPT_NET, a.batch, a.out)
        for opt in EXTRA_OPTIMIZERS:
            for module in ("optimizer", "train_step"):
                if module in modules:
                    n += 1
                    if err := make_case(a.netspec, EXTRA_OPT_NET, module, a.batch, a.out,
                                        classes, opt):
                        errors.append(err)
    if not a.no_variants:
        specs = a.out / "_specs"
        specs.mkdir(exist_ok=True)
        for suffix, net, vmodules, train, extra in VARIANTS:
            if net not in nets:
                continue
            spec = json.loads((MODELS_DIR / f"{net}.json").read_text())
            spec.setdefault("train", {}).update(train)
            path = specs / f"{net}.json"  # the case stem takes the spec file's stem
            path.write_text(json.dumps(spec, indent=1) + "\n")
            classes = num_classes(a.netspec, str(path), a.batch, a.out)
            for module in vmodules:
                if module in modules:
                    n += 1
                    if err := make_case(a.netspec, str(path), module, a.batch, a.out, classes,
                                        suffix=suffix, extra=extra):
                        errors.append(err)
    shutil.rmtree(a.out / "_conditioning", ignore_errors=True)
    for e in errors:
        print(f"FAIL {e}")
    print(f"gen_emitted: {n - len(errors)} of {n} cases written to {a.out}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
