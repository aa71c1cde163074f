"""Shared timing loop of the GPU reference scripts (jax_reference.py, torch_reference.py)."""
import statistics
import time


def time_steps(step, warmup, steps, batch, label):
    """Calls step(i) -> loss (i 1-based; step must finish its work before returning) warmup +
    steps times and prints "LABEL: ms/step median X  images/s Y  loss A -> B" over the timed
    steps."""
    ms, first, loss = [], None, None
    for s in range(warmup + steps):
        t0 = time.perf_counter()
        loss = float(step(s + 1))
        dt = (time.perf_counter() - t0) * 1e3
        if s >= warmup:
            ms.append(dt)
        if first is None:
            first = loss
    med = statistics.median(ms)
    print(f"{label}: ms/step median {med:.2f}  images/s {batch * 1e3 / med:.0f}  "
          f"loss {first:.4f} -> {loss:.4f}", flush=True)
