#!/usr/bin/python3
"""torchvision functional ops (PIL images) for the RandAugment / AutoAugment op set.

Usage: image_ops_reference.py DIR. DIR/in{k}.npy: uint8 [C, H, W] (C = 1 or 3). For every image
and every case of CASES writes DIR/out{k}_{name}.npy. Geometric ops as torchvision's RandAugment
calls them (NEAREST, fill 7, shear/translate about the top-left corner); solarize_add has no
torchvision op: PIL's point() with timm's LUT.
"""
import glob
import math
import sys

import numpy as np
import torchvision.transforms.functional as F
from PIL import Image
from torchvision.transforms import InterpolationMode

D = sys.argv[1]
N = InterpolationMode.NEAREST
CASES = {
    "brightness_1.6": lambda im: F.adjust_brightness(im, 1.6),
    "brightness_0.4": lambda im: F.adjust_brightness(im, 0.4),
    "contrast_1.7": lambda im: F.adjust_contrast(im, 1.7),
    "contrast_0.3": lambda im: F.adjust_contrast(im, 0.3),
    "color_1.8": lambda im: F.adjust_saturation(im, 1.8),
    "color_0.2": lambda im: F.adjust_saturation(im, 0.2),
    "sharpness_1.9": lambda im: F.adjust_sharpness(im, 1.9),
    "sharpness_0.1": lambda im: F.adjust_sharpness(im, 0.1),
    "posterize_3": lambda im: F.posterize(im, 3),
    "solarize_100": lambda im: F.solarize(im, 100),
    "solarize_add_40": lambda im: im.point([min(255, i + 40) if i < 128 else i for i in range(256)] * len(im.getbands())),
    "invert": lambda im: F.invert(im),
    "autocontrast": lambda im: F.autocontrast(im),
    "equalize": lambda im: F.equalize(im),
    "rotate_30": lambda im: F.rotate(im, 30.0, interpolation=N, fill=7),
    "rotate_-17": lambda im: F.rotate(im, -17.0, interpolation=N, fill=7),
    "shear_x_0.31": lambda im: F.affine(im, 0.0, [0, 0], 1.0, [math.degrees(math.atan(0.31)), 0.0],
                                       interpolation=N, fill=7, center=[0, 0]),
    "shear_y_-0.23": lambda im: F.affine(im, 0.0, [0, 0], 1.0, [0.0, math.degrees(math.atan(-0.23))],
                                        interpolation=N, fill=7, center=[0, 0]),
    "translate_x_5": lambda im: F.affine(im, 0.0, [-5, 0], 1.0, [0.0, 0.0], interpolation=N, fill=7),
    "translate_y_-4": lambda im: F.affine(im, 0.0, [0, 4], 1.0, [0.0, 0.0], interpolation=N, fill=7),
}
for path in sorted(glob.glob(f"{D}/in*.npy")):
    k = path[len(D) + 3:-4]
    a = np.load(path)
    im = Image.fromarray(a[0] if a.shape[0] == 1 else np.ascontiguousarray(a.transpose(1, 2, 0)),
                         "L" if a.shape[0] == 1 else "RGB")
    for name, f in CASES.items():
        o = np.asarray(f(im))
        o = o[None] if o.ndim == 2 else o.transpose(2, 0, 1)
        np.save(f"{D}/out{k}_{name}.npy", np.ascontiguousarray(o))
