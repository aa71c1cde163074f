"""Writes a generated image-folder tree for `netspec data bench` and bench/data_peer.py:
DIR/train/c0..c{K-1}/NNNN.jpg, photograph-like (smooth gradients, shapes, sensor noise) 500x375
(every 5th portrait 375x500) q90 4:2:0 JPEGs, as PIL saves them. Deterministic for a seed.

  python3 bench/make_jpegs.py DIR [--n 400] [--classes 4] [--quality 90] [--seed 0]
"""
import argparse
import os
import random

from PIL import Image, ImageDraw, ImageFilter


def image(rng, w, h):
    g = Image.linear_gradient("L").resize((w, h)).rotate(rng.uniform(0, 360), expand=False)
    base = Image.merge("RGB", [g.point(lambda v, a=rng.uniform(0.3, 1), b=rng.randrange(80):
                                       int(v * a + b)) for _ in range(3)])
    d = ImageDraw.Draw(base)
    for _ in range(rng.randrange(4, 12)):
        x0, y0 = rng.randrange(w), rng.randrange(h)
        x1, y1 = x0 + rng.randrange(20, w // 2), y0 + rng.randrange(20, h // 2)
        fill = tuple(rng.randrange(256) for _ in range(3))
        (d.ellipse if rng.random() < 0.5 else d.rectangle)((x0, y0, x1, y1), fill=fill)
    base = base.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 2.5)))
    noise = Image.effect_noise((w, h), rng.uniform(8, 24)).convert("RGB")
    return Image.blend(base, noise, 0.12)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--classes", type=int, default=4)
    ap.add_argument("--quality", type=int, default=90)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    for i in range(a.n):
        c = i % a.classes
        d = os.path.join(a.out, "train", f"c{c}")
        os.makedirs(d, exist_ok=True)
        w, h = (375, 500) if i % 5 == 4 else (500, 375)
        image(rng, w, h).save(os.path.join(d, f"{i:04}.jpg"), quality=a.quality)


if __name__ == "__main__":
    main()
