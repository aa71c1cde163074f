"""Runs the random programs jax_random_cases wrote (tests/jax/random_cases.cpp) under jax.jit and
compares each result with ref's: f32 to 1e-4, f64 to 1e-10, of the result's largest magnitude
(the same bounds as the oracle cases of these programs).
    check_random.py CASE_DIR"""
import glob
import importlib.util
import os
import sys

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    cases = sorted(glob.glob(os.path.join(sys.argv[1], "*.py")))
    failed = 0
    for path in cases:
        stem = path[:-3]
        name = os.path.basename(stem)
        ins = [np.load(p) for p in sorted(glob.glob(stem + ".in*.npy"), key=lambda p: int(p.split(".in")[-1][:-4]))]
        wants = [np.load(p) for p in sorted(glob.glob(stem + ".want*.npy"), key=lambda p: int(p.split(".want")[-1][:-4]))]
        try:
            got = jax.jit(load(path).main)(*ins)
        except Exception as e:  # a translation JAX refuses
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            failed += 1
            continue
        tol = 1e-10 if "f64" in name else 1e-4
        for i, (g, w) in enumerate(zip(got, wants)):
            g = np.asarray(g)
            if g.shape != w.shape or g.dtype != w.dtype:
                print(f"FAIL {name} result {i}: {g.dtype}{list(g.shape)} vs ref {w.dtype}{list(w.shape)}")
                failed += 1
                continue
            bound = tol * (1 + np.max(np.abs(w), initial=0))
            bad = ~((np.abs(g.astype(np.float64) - w) <= bound) | (g == w))
            if bad.any():
                j = int(np.argmax(bad.ravel()))
                print(f"FAIL {name} result {i}: {int(bad.sum())} of {w.size} off by more than "
                      f"{bound:g}, the first at {j}: jax {g.ravel()[j]!r}, ref {w.ravel()[j]!r}")
                failed += 1
        if len(got) != len(wants):
            print(f"FAIL {name}: {len(got)} results, ref {len(wants)}")
            failed += 1
    print(f"check_random: {len(cases) - failed if failed <= len(cases) else 0} of {len(cases)} cases agree"
          if not failed else f"check_random: {failed} failures in {len(cases)} cases")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
