#!/usr/bin/env python3
"""Runs StableHLO case modules on four engines and checks that they agree.

Engines: netspec's `ref` and `cpu` executors (through `netspec run`), XLA's CPU compiler
(jaxlib: the text is compiled as-is by the PJRT CPU client) and IREE (iree-compile for llvm-cpu +
iree-run-module). Real StableHLO consumers judge netspec's printer (an engine that rejects the
text is a failure) and its executors (results must agree with `ref`).

A case is CASE.mlir (entry: `main`, else the only public function) with inputs CASE.in<i>.npy;
where none exist, deterministic random inputs are made from the entry's signature. An optional
CASE.json tunes the check: {"rtol": r, "atol": a, "skip": {"iree": "reason"},
"unordered": [i...] (results compared after sorting), "shape_only": [i...],
"expect_reject": "why"} (a negative case: every engine must refuse it),
"compile_only": {"iree": "why"} (the text must compile; the run is skipped),
"env": {"NAME": "value"} (environment for netspec's ref/cpu runs of this case).

Agreement: integers and i1 exactly; floats |x - ref| <= atol + rtol * |ref| elementwise with
rtol = 1e-5 for f32 and 1e-12 for f64, and atol just above the largest subnormal (1e-37 for f32,
1e-300 for f64) so that the check is relative but XLA's and IREE's flushing of subnormal results
to zero passes; cases that accumulate (dot, convolution, sums) state atol = rtol in their .json,
since cancellation makes a small result's relative error meaningless. NaN must meet NaN, inf the
same inf; the sign of zero is not checked. Shapes and dtypes must match exactly.

Usage: compare.py --cases DIR --netspec BIN [--engines ref,cpu,xla,iree] [--work DIR]
Exit: 0 all agree (or, with no oracle engine in this Python, a SKIP message and --skip-code).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

TOL = {np.dtype(np.float32): (1e-5, 1e-37), np.dtype(np.float64): (1e-12, 1e-300),
       np.dtype(np.float16): (1e-3, 1e-4)}
ENGINES = ("ref", "cpu", "xla", "iree")
TIMEOUT_S = 120

# --------------------------------------------------------------------------------------------
# Signatures and inputs


_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i1": np.bool_, "i8": np.int8,
           "i16": np.int16, "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "ui16": np.uint16,
           "ui32": np.uint32, "ui64": np.uint64}


def parse_tensor_type(t: str):
    """'tensor<2x3xf32>' -> ((2, 3), np.float32)."""
    m = re.fullmatch(r"\s*tensor<([^>]*)>\s*", t)
    if not m:
        raise ValueError(f"not a ranked tensor type: {t!r}")
    parts = m.group(1).split("x")
    return tuple(int(p) for p in parts[:-1]), _DTYPES[parts[-1]]


def _functions(text: str):
    """(visibility, name, argument types text, result types text) of each function, in the
    pretty form (func.func @f(%a: T) -> R) or the generic one ("func.func"() <{...}>)."""
    out = []
    for m in re.finditer(r"func\.func\s+(public\s+|private\s+)?@([\w.$-]+)\s*\(([^)]*)\)"
                         r"\s*(?:->\s*(\([^{]*\)|tensor<[^>]*>))?", text):
        out.append(((m.group(1) or "").strip(), m.group(2), m.group(3), m.group(4) or ""))
    for m in re.finditer(r'"func\.func"\(\)\s*<\{(.*?)\}>\s*\(\{', text, re.S):
        attrs = m.group(1)
        ft = re.search(r"function_type\s*=\s*\(([^)]*)\)\s*->\s*(\([^)]*\)|tensor<[^>]*>)", attrs)
        name = re.search(r'sym_name\s*=\s*"([^"]*)"', attrs)
        vis = re.search(r'sym_visibility\s*=\s*"([^"]*)"', attrs)
        if ft and name:
            out.append((vis.group(1) if vis else "", name.group(1), ft.group(1), ft.group(2)))
    return out


def entry_function(text: str):
    funcs = _functions(text)
    if not funcs:
        raise ValueError("no func.func found")
    pub = [f for f in funcs if f[0] != "private"]
    chosen = next((f for f in funcs if f[1] == "main"), pub[0] if len(pub) == 1 else None)
    if chosen is None:
        raise ValueError("no @main and not exactly one public function")
    return chosen


def entry_signature(text: str):
    """Name and argument types of the entry function (main, else the only public one)."""
    _, name, args, _ = entry_function(text)
    return name, [parse_tensor_type(a) for a in re.findall(r"tensor<[^>]*>", args)]


def random_input(shape, dtype, rng: np.random.Generator):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt.kind in "iu":
        return rng.integers(-5 if dt.kind == "i" else 0, 6, size=shape).astype(dt)
    return rng.standard_normal(size=shape).astype(dt)


def case_inputs(case: Path, text: str, work: Path):
    files = sorted(case.parent.glob(case.stem + ".in*.npy"),
                   key=lambda p: int(re.search(r"\.in(\d+)\.npy$", p.name).group(1)))
    if files:
        return files
    _, sig = entry_signature(text)
    seed = int.from_bytes(hashlib.sha256(case.stem.encode()).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    out = []
    gen_dir = work / "inputs"
    gen_dir.mkdir(parents=True, exist_ok=True)
    for i, (shape, dtype) in enumerate(sig):
        p = gen_dir / f"{case.stem}.in{i}.npy"
        np.save(p, random_input(shape, dtype, rng))
        out.append(p)
    return out


# --------------------------------------------------------------------------------------------
# Engines. Each returns ("ok", [arrays]) or ("fail", message).


def run_netspec(netspec, backend, case: Path, inputs, work: Path, env=None):
    out = work / f"{case.stem}.{backend}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cmd = [str(netspec), "run", str(case), "--output-dir", str(out), "--backend", backend]
    for p in inputs:
        cmd += ["--input", str(p)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S,
                           env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired:
        return "fail", f"timed out after {TIMEOUT_S} s"
    if r.returncode != 0:
        return "fail", f"exit {r.returncode}: {(r.stderr or r.stdout).strip()[-2000:]}"
    files = sorted(out.glob("result*.npy"), key=lambda p: int(p.stem[len("result"):]))
    return "ok", [np.load(p) for p in files]


def iree_tools():
    bindir = Path(sys.executable).parent
    c, r = bindir / "iree-compile", bindir / "iree-run-module"
    if c.exists() and r.exists():
        return c, r
    c, r = shutil.which("iree-compile"), shutil.which("iree-run-module")
    return (Path(c), Path(r)) if c and r else None


def run_iree(tools, case: Path, inputs, n_results: int, work: Path, entry: str,
             compile_only: str | None = None):
    compile_bin, run_bin = tools
    vmfb = work / f"{case.stem}.vmfb"
    cmd = [str(compile_bin), "--iree-hal-target-backends=llvm-cpu",
           "--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false",
           "--iree-input-demote-i64-to-i32=false", str(case), "-o", str(vmfb)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        if r.returncode != 0:
            return "fail", f"iree-compile exit {r.returncode}: {r.stderr.strip()[-2000:]}"
        if compile_only:
            return "skip", f"compiled; not run: {compile_only}"
        outs = [work / f"{case.stem}.iree.out{i}.npy" for i in range(n_results)]
        for o in outs:
            o.unlink(missing_ok=True)
        cmd = [str(run_bin), f"--module={vmfb}", "--device=local-sync", f"--function={entry}"]
        cmd += [f"--input=@{p}" for p in inputs] + [f"--output=@{o}" for o in outs]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "fail", f"timed out after {TIMEOUT_S} s"
    if r.returncode != 0:
        return "fail", f"iree-run-module exit {r.returncode}: {r.stderr.strip()[-2000:]}"
    return "ok", [np.load(o) for o in outs]


class XlaWorker:
    """XLA runs in a child process (this script with --xla-worker), so that an abort inside XLA
    fails one case instead of the run; a crashed worker is restarted for the next case."""

    def __init__(self):
        self.proc = None

    def _start(self):
        self.proc = subprocess.Popen([sys.executable, __file__, "--xla-worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)

    def run(self, case: Path, inputs, work: Path):
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        out_dir = work / f"{case.stem}.xla"
        shutil.rmtree(out_dir, ignore_errors=True)
        out_dir.mkdir(parents=True)
        req = {"case": str(case), "inputs": [str(p) for p in inputs], "out": str(out_dir)}
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            err = self.proc.stderr.read()[-2000:] if self.proc.stderr else ""
            self.proc.wait()
            rc = self.proc.returncode
            self.proc = None
            return "fail", f"XLA worker died (exit {rc}): {err.strip()}"
        reply = json.loads(line)
        if reply["status"] != "ok":
            return "fail", reply["message"]
        return "ok", [np.load(out_dir / f"result{i}.npy") for i in range(reply["n"])]

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def xla_worker_main():
    import jax
    import jax.extend
    jax.config.update("jax_enable_x64", True)  # else f64/i64 inputs are silently narrowed
    from jax._src.lib import xla_client as xc
    backend = jax.extend.backend.get_backend("cpu")
    device = backend.local_devices()[0]
    for line in sys.stdin:
        req = json.loads(line)
        try:
            text = Path(req["case"]).read_text()
            exe = backend.compile_and_load(text, xc.DeviceList((device,)), xc.CompileOptions())
            args = [jax.device_put(np.load(p), device) for p in req["inputs"]]
            results = exe.execute(args)
            for i, r in enumerate(results):
                np.save(Path(req["out"]) / f"result{i}.npy", np.asarray(r))
            reply = {"status": "ok", "n": len(results)}
        except Exception as e:  # the message is the finding: report it, keep serving
            msg = f"{type(e).__name__}: {e}"
            reply = {"status": "fail", "message": msg[-2000:]}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def have_jax():
    try:
        import importlib.util
        return importlib.util.find_spec("jax") is not None
    except Exception:
        return False


# --------------------------------------------------------------------------------------------
# Comparison


def compare_arrays(got, want, rtol=None, atol=None, unordered=False, shape_only=False):
    """None when they agree, else a short description of the first difference."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} vs {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} vs {want.shape}"
    if shape_only or want.size == 0:
        return None
    if unordered:
        got, want = np.sort(got, axis=None), np.sort(want, axis=None)
    if want.dtype.kind not in "fc":
        bad = got != want
        if not bad.any():
            return None
        idx = np.unravel_index(np.argmax(bad), want.shape)
        return f"{int(bad.sum())} of {want.size} differ; first at {idx}: {got[idx]} vs {want[idx]}"
    r0, a0 = TOL.get(want.dtype, (1e-5, 1e-37))
    rtol = r0 if rtol is None else rtol
    atol = a0 if atol is None else atol
    g, w = got.astype(np.float64), want.astype(np.float64)
    gn, wn = np.isnan(g), np.isnan(w)
    ginf, winf = np.isinf(g), np.isinf(w)
    with np.errstate(invalid="ignore"):
        close = np.abs(g - w) <= atol + rtol * np.abs(w)
    ok = np.where(wn | gn, wn & gn, np.where(winf | ginf, g == w, close))
    if ok.all():
        return None
    bad = ~ok
    idx = np.unravel_index(np.argmax(bad), want.shape)
    with np.errstate(invalid="ignore"):
        err = np.max(np.where(bad, np.nan_to_num(np.abs(g - w), nan=np.inf), 0.0))
    return (f"{int(bad.sum())} of {want.size} differ (rtol {rtol:g}, atol {atol:g}); max |diff| "
            f"{err:.3g}; first at {idx}: {got[idx]!r} vs {want[idx]!r}")


def compare_results(got, want, meta):
    if len(got) != len(want):
        return f"{len(got)} results vs {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        d = compare_arrays(g, w, meta.get("rtol"), meta.get("atol"),
                           unordered=i in meta.get("unordered", []),
                           shape_only=i in meta.get("shape_only", []))
        if d:
            return f"result {i}: {d}"
    return None


def self_test():
    f = np.float32
    assert compare_arrays(np.array([1, 2], f), np.array([1, 2], f)) is None
    assert compare_arrays(np.array([1, 2.001], f), np.array([1, 2], f)) is not None
    assert compare_arrays(np.array([1e-30], f), np.array([1.1e-30], f)) is not None  # relative
    assert compare_arrays(np.array([0.0], f), np.array([1e-40], f)) is None  # flushed subnormal
    assert compare_arrays(np.array([1e-6], f), np.array([0.0], f), atol=1e-5) is None
    assert compare_arrays(np.array([np.nan, -np.inf], f), np.array([np.nan, -np.inf], f)) is None
    assert compare_arrays(np.array([np.nan], f), np.array([1.0], f)) is not None
    assert compare_arrays(np.array([np.inf], f), np.array([-np.inf], f)) is not None
    assert compare_arrays(np.array([1e30], f), np.array([np.inf], f)) is not None
    assert compare_arrays(np.array([-0.0], f), np.array([0.0], f)) is None
    assert compare_arrays(np.array([1, 2], np.int32), np.array([1, 3], np.int32)) is not None
    assert compare_arrays(np.array([1, 2], np.int64), np.array([1, 2], np.int32)) is not None
    assert compare_arrays(np.zeros((2, 3), f), np.zeros((3, 2), f)) is not None
    assert compare_arrays(np.array([3, 1], f), np.array([1, 3], f), unordered=True) is None
    assert compare_results([np.zeros(2, f)], [], {}) is not None
    print("self-test passed")


# --------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=Path, help="folder of CASE.mlir (+ CASE.in<i>.npy, CASE.json)")
    ap.add_argument("--netspec", type=Path, help="the netspec binary (ref and cpu engines)")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma list (default: all)")
    ap.add_argument("--only", default="", help="regex: run only cases whose name matches")
    ap.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    ap.add_argument("--jobs", type=int, default=2, help="cases run in parallel (default 2)")
    ap.add_argument("--skip-code", type=int, default=0,
                    help="exit status when no oracle engine is available (default 0)")
    ap.add_argument("--xla-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--self-test", action="store_true", help="check the comparison rules")
    a = ap.parse_args()
    if a.xla_worker:
        return xla_worker_main()
    if a.self_test:
        return self_test()
    if not a.cases:
        ap.error("--cases is required")

    wanted = [e.strip() for e in a.engines.split(",") if e.strip()]
    engines, missing = [], []
    for e in wanted:
        if e in ("ref", "cpu"):
            if a.netspec and a.netspec.exists():
                engines.append(e)
            else:
                missing.append(f"{e} (no netspec binary: {a.netspec})")
        elif e == "xla":
            (engines if have_jax() else missing).append(e if have_jax() else "xla (no jax)")
        elif e == "iree":
            (engines if iree_tools() else missing).append(
                e if iree_tools() else "iree (no iree-compile/iree-run-module)")
        else:
            ap.error(f"unknown engine {e!r} (expected one of {', '.join(ENGINES)})")
    for m in missing:
        print(f"SKIP engine {m}")
    if not any(e in ("xla", "iree") for e in engines) and any(e in wanted for e in ("xla", "iree")):
        print(f"SKIP: no oracle engine (jax or IREE) in {sys.executable}; nothing to judge")
        return a.skip_code
    if len(engines) < 2:
        print("SKIP: fewer than two engines available; nothing to compare")
        return a.skip_code

    cases = sorted(p for p in a.cases.glob("*.mlir") if re.search(a.only, p.stem))
    if not cases:
        print(f"error: no .mlir cases in {a.cases}" + (f" matching {a.only!r}" if a.only else ""))
        return 1
    work = a.work or Path(tempfile.mkdtemp(prefix="netspec-oracles-"))
    work.mkdir(parents=True, exist_ok=True)
    tools = iree_tools()
    xla = XlaWorker() if "xla" in engines else None

    def run_case(case: Path):
        text = case.read_text()
        meta_path = case.with_suffix(".json")
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        skip = meta.get("skip", {})
        try:
            entry, _ = entry_signature(text)
            inputs = case_inputs(case, text, work)
        except Exception as e:
            return {e2: ("fail", f"bad case: {e}") for e2 in engines}, meta, []
        res = {}
        for e in engines:
            if e in skip:
                res[e] = ("skip", skip[e])
            elif e in ("ref", "cpu"):
                res[e] = run_netspec(a.netspec, e, case, inputs, work, meta.get("env"))
        if "iree" in engines and "iree" not in skip:
            n = len(res["ref"][1]) if res.get("ref", ("",))[0] == "ok" else None
            if n is None:  # count results from the entry's declared result types
                n = _count_results(text, entry)
            res["iree"] = run_iree(tools, case, inputs, n, work, entry,
                                   meta.get("compile_only", {}).get("iree"))
        return res, meta, inputs

    t0 = time.time()
    results = {}
    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futs = {pool.submit(run_case, c): c for c in cases}
        for f in cf.as_completed(futs):
            try:
                results[futs[f]] = f.result()
            except Exception:
                results[futs[f]] = ({e: ("fail", traceback.format_exc()) for e in engines}, {}, [])
    if xla:  # serially, in the worker
        for c in cases:
            res, meta, inputs = results[c]
            if "xla" in meta.get("skip", {}):
                res["xla"] = ("skip", meta["skip"]["xla"])
            elif not any(v[0] == "fail" and v[1].startswith("bad case") for v in res.values()):
                try:
                    res["xla"] = xla.run(c, inputs, work)
                except Exception as e:
                    res["xla"] = ("fail", f"{type(e).__name__}: {e}")
        xla.close()

    # Judge: every engine against ref (or, without ref, against the first that ran).
    failures = []
    width = max(len(c.stem) for c in cases)
    print(f"{'case':<{width}}  " + "  ".join(f"{e:<5}" for e in engines))
    n_ok = 0
    for c in cases:
        res, meta, _ = results[c]
        if meta.get("expect_reject"):  # a negative case: every engine must refuse the text
            took = [e for e in engines if res.get(e, ("",))[0] == "ok"]
            for e in took:
                failures.append((c, e, "accepted a module it must reject", meta["expect_reject"]))
            n_ok += not took
            print(f"{c.stem:<{width}}  " + "  ".join(
                f"{'ACCPT' if e in took else 'rej':<5}" for e in engines))
            continue
        base_name = next((e for e in engines if res.get(e, ("",))[0] == "ok"), None)
        base = res[base_name][1] if base_name else None
        cells, case_ok = [], True
        for e in engines:
            status, payload = res.get(e, ("fail", "not run"))
            if status == "skip":
                cells.append("skip")
            elif status == "fail":
                cells.append("FAIL")
                failures.append((c, e, "rejected or crashed", payload))
                case_ok = False
            elif e == base_name:
                cells.append("ok")
            else:
                d = compare_results(payload, base, meta)
                if d:
                    cells.append("DIFF")
                    failures.append((c, e, f"differs from {base_name}", d))
                    case_ok = False
                else:
                    cells.append("ok")
        n_ok += case_ok
        print(f"{c.stem:<{width}}  " + "  ".join(f"{x:<5}" for x in cells))
    print()
    for c, e, what, detail in failures:
        print(f"--- {c.stem} [{e}] {what}:\n{detail.strip()}\n")
    print(f"oracles: {n_ok} passed, {len(cases) - n_ok} failed of {len(cases)} cases "
          f"on {', '.join(engines)} in {time.time() - t0:.0f} s")
    return 1 if failures else 0


def _count_results(text: str, entry: str) -> int:
    return len(re.findall(r"tensor<", entry_function(text)[3]))


if __name__ == "__main__":
    sys.exit(main())
