#!/usr/bin/python3
# PyTorch reference for netspec's mlp recipe (issue 6's 86 % target): Fashion-MNIST,
# 784-512-512-10 (nn.Linear default init), Adam 1e-3, batch 128, shuffle, 2 epochs, test top-1
# after each epoch. Debian's python3-torch; data from dataset-fashion-mnist.
#   bench/torch_mlp_recipe.py norm|raw keep|drop SEED...
# (norm: netspec's normalisation 0.2860/0.3530; keep: drop_last=False, netspec's behaviour).
# Session 3, seeds 0-39, norm keep: mean 86.53 %, sd 0.42, 35/40 >= 86 % (docs/training.md).
import gzip, sys, numpy as np, torch, torch.nn as nn, torch.nn.functional as F
D = "/usr/share/datasets/fashion-mnist/"
def idx(name, off):
    with gzip.open(D + name) as f: return np.frombuffer(f.read(), np.uint8, offset=off)
def load(pfx, norm):
    x = idx(pfx + "-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28).astype(np.float32) / 255
    if norm: x = (x - 0.2860) / 0.3530
    return torch.from_numpy(x), torch.from_numpy(idx(pfx + "-labels-idx1-ubyte.gz", 8).astype(np.int64))
torch.set_num_threads(1)
norm = sys.argv[1] == "norm"; drop_last = sys.argv[2] == "drop"
xtr, ytr = load("train", norm); xte, yte = load("t10k", norm)
for seed in map(int, sys.argv[3:]):
    torch.manual_seed(seed)
    m = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xtr, ytr), batch_size=128, shuffle=True, drop_last=drop_last)
    accs = []
    for ep in range(2):
        m.train()
        for x, y in dl:
            opt.zero_grad(); F.cross_entropy(m(x), y).backward(); opt.step()
        m.eval()
        with torch.no_grad(): accs.append((m(xte).argmax(1) == yte).float().mean().item())
    print(f"norm={norm} drop_last={drop_last} seed={seed} epoch1={100*accs[0]:.2f} epoch2={100*accs[1]:.2f} steps/epoch={len(dl)}", flush=True)
