# pycocotools' COCOeval on GT / detection JSON files: prints AP@[.5:.95], AP50 and the per-class
# AP@[.5:.95] (area all, maxDets 100), one number per line, for tests/train/detection_test.cpp.
import contextlib
import io
import sys

import numpy as np
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO(sys.argv[1])
    dt = gt.loadRes(sys.argv[2])
    ev = COCOeval(gt, dt, "bbox")
    ev.evaluate()
    ev.accumulate()
    ev.summarize()
print(repr(float(ev.stats[0])))
print(repr(float(ev.stats[1])))
prec = ev.eval["precision"][:, :, :, 0, 2]  # [T, R, K] at area all, maxDets 100
for k in range(prec.shape[2]):
    p = prec[:, :, k]
    print(repr(float(np.mean(p[p > -1])) if (p > -1).any() else -1.0))
