"""The torchvision peer of `netspec data bench`: ImageFolder + the same transform on the same
files in a DataLoader, printing images/s and images per CPU-second of the whole process tree.

  python bench/data_peer.py DIR/train [--workers N] [--batch 32] [--transform netspec|rrc]

--transform netspec: Resize(224) + CenterCrop(224) + RandomCrop(224, padding=28) + flip +
ToTensor (without numpy) + Normalize (what netspec's folder reader + Augment::standard() do);
rrc: RandomResizedCrop(224) + flip + ToTensor + Normalize (the issue's anchor recipe).
"""
import argparse
import os
import resource
import time

import torch
import torchvision.transforms as T
from torchvision.datasets import ImageFolder


def cpu_seconds():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def to_tensor(img):
    """ToTensor without numpy (the same values: bytes / 255, CHW)."""
    w, h = img.size
    t = torch.frombuffer(bytearray(img.convert("RGB").tobytes()), dtype=torch.uint8)
    return t.view(h, w, 3).permute(2, 0, 1).float().div_(255)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--transform", choices=["netspec", "rrc"], default="netspec")
    a = ap.parse_args()
    torch.set_num_threads(1)
    norm = T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    if a.transform == "rrc":
        tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), to_tensor, norm])
    else:
        tf = T.Compose([T.Resize(224), T.CenterCrop(224), T.RandomCrop(224, padding=28),
                        T.RandomHorizontalFlip(), to_tensor, norm])
    ds = ImageFolder(a.root, transform=tf)
    dl = torch.utils.data.DataLoader(ds, batch_size=a.batch, shuffle=True,
                                     num_workers=a.workers)
    c0, t0, n = cpu_seconds(), time.perf_counter(), 0
    for x, _ in dl:
        n += x.shape[0]
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    print(f"torchvision {a.transform}: {n} images in {wall:.2f} s: {n / wall:.0f} images/s, "
          f"{n / cpu:.0f} per CPU-second ({a.workers} workers, pid {os.getpid()})")


if __name__ == "__main__":
    main()
