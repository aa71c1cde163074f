# The 2-D GEMMs of vit-cifar-tiny's train step (bench/bench_dot.cpp `shapes`) on torch.mm, ms and
# GFLOP/s per shape (benchmark only): VENV/bin/python bench/torch2_mm_peer.py
import time, torch
torch.manual_seed(0)
def t(f, reps=41):
    for _ in range(5): f()
    ts=[]
    for _ in range(reps):
        a=time.perf_counter(); f(); ts.append(time.perf_counter()-a)
    ts.sort(); return ts[len(ts)//2]
T=2048
for k,n in [(128,384),(384,128),(128,256),(256,128),(128,128)]:
    a=torch.randn(T,k); b=torch.randn(k,n)
    s=t(lambda: torch.mm(a,b)); print(f"nn m {T} k {k} n {n}  torch {s*1e3:.3f} ms ({2*T*k*n/s/1e9:.1f} GFLOP/s)")
for m,n in [(384,128),(256,128),(128,256),(128,128)]:
    a=torch.randn(T,m); b=torch.randn(T,n)
    s=t(lambda: torch.mm(a.t(),b)); print(f"tn m {m} k {T} n {n}  torch {s*1e3:.3f} ms ({2*T*m*n/s/1e9:.1f} GFLOP/s)")
