#!/usr/bin/env python3
"""PyTorch reference train steps for bench/gpu/check.sh: torchvision's resnet50 (SGD-momentum
0.9, lr 0.1) and a ViT-Tiny built from torchvision's VisionTransformer (patch 16, 12 layers,
3 heads, dim 192, mlp 768; AdamW lr 1e-3, wd 0.05), on synthetic data, eager or torch.compile.

Usage: torch_reference.py --model resnet50|vit-tiny [--compile] [--batch B] [--size S]
       [--steps N] [--warmup N] [--classes C] [--device cuda|cpu]
Prints one line: "torch MODEL eager|compile batch B: ms/step median X  images/s Y  loss A -> B".
"""
import argparse

import torch
import torchvision

from timing import time_steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["resnet50", "vit-tiny"], required=True)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.device(a.device)
    if a.model == "resnet50":
        model = torchvision.models.resnet50(num_classes=a.classes)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    else:
        model = torchvision.models.VisionTransformer(
            image_size=a.size, patch_size=16, num_layers=12, num_heads=3, hidden_dim=192,
            mlp_dim=768, num_classes=a.classes)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    model = model.to(dev).train()
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    if a.compile:
        step = torch.compile(step)
    x = torch.rand(a.batch, 3, a.size, a.size, device=dev) * 2 - 1
    y = torch.randint(0, a.classes, (a.batch,), device=dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    def one(i):
        sync()
        loss = step(x, y)
        sync()
        return loss

    time_steps(one, a.warmup, a.steps, a.batch,
               f"torch {a.model} {'compile' if a.compile else 'eager'} batch {a.batch} on {dev.type}")

if __name__ == "__main__":
    main()
