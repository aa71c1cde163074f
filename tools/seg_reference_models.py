"""Reference PyTorch modules for netspec's segmentation layer kinds, in the MODELS table format of
the PyTorch peer file (name -> (constructor(classes),)), loaded by
tools/torchvision_reference.py --model peer:NAME --peer-file tools/seg_reference_models.py.
Each takes a 3-channel image and returns a [B, classes, H', W'] map:
  bilinear  1x1 conv (3 -> classes, bias), F.interpolate(scale 3, bilinear, align_corners=False)
  aspp      torchvision.models.segmentation.deeplabv3.ASPP(3, [12, 24, 36], classes)
  unet      Pytorch-UNet (milesial) layout: DoubleConv 3 -> 8, Down 8 -> 16, Down 16 -> 32,
            Up 32 -> 16, Up 16 -> 8 (ConvTranspose2d 2x2/2, cat([skip, up])), 1x1 conv -> classes
"""
import torch
import torch.nn.functional as F
from torch import nn
from torchvision.models.segmentation.deeplabv3 import ASPP


class Bilinear(nn.Module):
    def __init__(self, classes, scale=3):
        super().__init__()
        self.conv = nn.Conv2d(3, classes, 1)
        self.scale = scale

    def forward(self, x):
        return F.interpolate(self.conv(x), scale_factor=self.scale, mode="bilinear",
                             align_corners=False)


def double_conv(i, o):
    return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(),
                         nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU())


class Up(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.up = nn.ConvTranspose2d(i, i // 2, 2, stride=2)
        self.conv = double_conv(i, o)

    def forward(self, x, skip):
        return self.conv(torch.cat([skip, self.up(x)], dim=1))


class UNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.inc = double_conv(3, 8)
        self.down1 = nn.Sequential(nn.MaxPool2d(2), double_conv(8, 16))
        self.down2 = nn.Sequential(nn.MaxPool2d(2), double_conv(16, 32))
        self.up1 = Up(32, 16)
        self.up2 = Up(16, 8)
        self.outc = nn.Conv2d(8, classes, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        return self.outc(self.up2(self.up1(x3, x2), x1))


MODELS = {
    "bilinear": (lambda classes: Bilinear(classes),),
    "aspp": (lambda classes: ASPP(3, [12, 24, 36], classes),),
    "unet": (lambda classes: UNet(classes),),
}
