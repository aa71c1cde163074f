"""torch2_infer_peer.py -- inference beside `netspec bench NET --module eval` (issue 42): the model
in eval mode under torch.inference_mode(), eager or torch.compile (inductor, C++ codegen), one
forward of a fixed random batch per call. Models: resnet18 (the peer's CIFAR ResNet18 of
shared/peers/torch_train_step.py, 3x32x32), resnet50 (torchvision, 3x224x224, 1000 classes),
vit-tiny (ViT-Ti/16 at 224 built with torchvision's VisionTransformer: 12 layers, 3 heads, width
192, MLP 768 -- timm's vit_tiny_patch16_224 layout, 1000 classes), or any other torchvision
classifier by its torchvision name, `torchvision.NAME` where NAME is one of the above (3x224x224,
1000 classes: the zoo's ImageNet nets).
Run with the torch 2 venv: VENV/bin/python bench/torch2_infer_peer.py MODEL --batch B --mode eager|compile
Prints 'MODEL ... first call X s; ms/call median M min A max B; images/s I'."""
import argparse, os, statistics, sys, time

import torch


def build(name):
    if name == "resnet18":  # (torchvision's own: torchvision.resnet18)
        peers = os.environ.get("NETSPEC_PEERS", os.path.join(os.path.dirname(__file__), "..", "..",
                                                             "shared", "peers"))
        sys.path.insert(0, os.path.abspath(peers))
        from torch_train_step import MODELS
        return MODELS["resnet18"][0](), (3, 32, 32)
    import torchvision
    if name == "resnet50":
        return torchvision.models.resnet50(num_classes=1000), (3, 224, 224)
    if name == "vit-tiny":
        from torchvision.models.vision_transformer import VisionTransformer
        return VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=3,
                                 hidden_dim=192, mlp_dim=768, num_classes=1000), (3, 224, 224)
    tv = name.removeprefix("torchvision.")  # torchvision.resnet18: torchvision's, not the peer's
    if hasattr(torchvision.models, tv):  # any other torchvision classifier, 3x224x224
        return getattr(torchvision.models, tv)(num_classes=1000), (3, 224, 224)
    sys.exit(f"unknown model {name} (resnet18 | resnet50 | vit-tiny | a torchvision model)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--mode", default="eager")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    t_start = time.perf_counter()
    torch.manual_seed(0)
    model, shape = build(a.model)
    model.eval()
    if a.mode == "compile":
        model = torch.compile(model)
    x = torch.randn(a.batch, *shape)
    times = []
    with torch.inference_mode():
        model(x)
        first = time.perf_counter() - t_start
        for i in range(a.warmup + a.steps):
            t0 = time.perf_counter()
            model(x)
            dt = (time.perf_counter() - t0) * 1e3
            if i >= a.warmup:
                times.append(dt)
    med = statistics.median(times)
    print(f"{a.model} torch {torch.__version__} {a.mode} inference batch {a.batch}: first call "
          f"{first:.1f} s; ms/call median {med:.2f} min {min(times):.2f} max {max(times):.2f}; "
          f"images/s {a.batch * 1e3 / med:.0f}")


if __name__ == "__main__":
    main()
