#!/usr/bin/env python3
"""JAX reference train steps for bench/gpu/check.sh: ResNet-50 (SGD-momentum, BN in train mode)
and ViT-Tiny (AdamW), written in plain jax.numpy / lax (no flax), jitted as one step with the
parameters donated, timed on synthetic data like `netspec bench`. Same XLA as netspec's
--backend xla, so the step times should be close.

Usage: jax_reference.py --model resnet50|vit-tiny [--batch B] [--size S] [--steps N]
       [--warmup N] [--classes C]
Prints one line: "jax MODEL batch B: ms/step median X  images/s Y  loss A -> B".
"""
import argparse

import jax
import jax.numpy as jnp
from jax import lax

from timing import time_steps


def he(key, shape, fan_in):
    return jax.random.normal(key, shape, jnp.float32) * jnp.sqrt(2.0 / fan_in)


# ---------------- ResNet-50 (torchvision layout, NCHW / OIHW) ----------------
def conv(x, w, stride=1, pad=0):
    return lax.conv_general_dilated(x, w, (stride, stride), [(pad, pad), (pad, pad)],
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


def bn(x, p):
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    var = x.var(axis=(0, 2, 3), keepdims=True)
    y = (x - mean) * lax.rsqrt(var + 1e-5)
    return y * p["g"][None, :, None, None] + p["b"][None, :, None, None]


def bn_params(c):
    return {"g": jnp.ones((c,), jnp.float32), "b": jnp.zeros((c,), jnp.float32)}


def resnet50_init(key, classes, widths=(64, 128, 256, 512), blocks=(3, 4, 6, 3)):
    keys = iter(jax.random.split(key, 256))
    p = {"stem": he(next(keys), (widths[0], 3, 7, 7), 3 * 49), "stem_bn": bn_params(widths[0])}
    cin, stages = widths[0], []
    for si, (w, n) in enumerate(zip(widths, blocks)):
        stage = []
        for bi in range(n):
            cout = 4 * w
            blk = {"w1": he(next(keys), (w, cin, 1, 1), cin), "bn1": bn_params(w),
                   "w2": he(next(keys), (w, w, 3, 3), 9 * w), "bn2": bn_params(w),
                   "w3": he(next(keys), (cout, w, 1, 1), w), "bn3": bn_params(cout)}
            if bi == 0:
                blk["wd"] = he(next(keys), (cout, cin, 1, 1), cin)
                blk["bnd"] = bn_params(cout)
            stage.append(blk)
            cin = cout
        stages.append(stage)
    p["stages"] = stages
    p["fc_w"] = he(next(keys), (cin, classes), cin)
    p["fc_b"] = jnp.zeros((classes,), jnp.float32)
    return p


def resnet50_apply(p, x):
    x = jax.nn.relu(bn(conv(x, p["stem"], 2, 3), p["stem_bn"]))
    x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2),
                          [(0, 0), (0, 0), (1, 1), (1, 1)])
    for si, stage in enumerate(p["stages"]):
        for bi, blk in enumerate(stage):
            stride = 2 if (bi == 0 and si > 0) else 1
            h = jax.nn.relu(bn(conv(x, blk["w1"]), blk["bn1"]))
            h = jax.nn.relu(bn(conv(h, blk["w2"], stride, 1), blk["bn2"]))
            h = bn(conv(h, blk["w3"]), blk["bn3"])
            sc = bn(conv(x, blk["wd"], stride), blk["bnd"]) if "wd" in blk else x
            x = jax.nn.relu(h + sc)
    x = x.mean(axis=(2, 3))
    return x @ p["fc_w"] + p["fc_b"]


# ---------------- ViT-Tiny (patch 16, dim 192, depth 12, heads 3, mlp 768) ----------------
def vit_init(key, classes, size, patch=16, dim=192, depth=12, heads=3, mlp=768):
    keys = iter(jax.random.split(key, 8 + 8 * depth))
    n = (size // patch) ** 2
    p = {"patch_w": he(next(keys), (dim, 3, patch, patch), 3 * patch * patch),
         "patch_b": jnp.zeros((dim,)), "cls": jnp.zeros((1, 1, dim)),
         "pos": jax.random.normal(next(keys), (1, n + 1, dim)) * 0.02, "blocks": [],
         "ln_g": jnp.ones((dim,)), "ln_b": jnp.zeros((dim,)),
         "head_w": he(next(keys), (dim, classes), dim), "head_b": jnp.zeros((classes,))}
    for _ in range(depth):
        p["blocks"].append({
            "ln1_g": jnp.ones((dim,)), "ln1_b": jnp.zeros((dim,)),
            "qkv_w": he(next(keys), (dim, 3 * dim), dim), "qkv_b": jnp.zeros((3 * dim,)),
            "proj_w": he(next(keys), (dim, dim), dim), "proj_b": jnp.zeros((dim,)),
            "ln2_g": jnp.ones((dim,)), "ln2_b": jnp.zeros((dim,)),
            "fc1_w": he(next(keys), (dim, mlp), dim), "fc1_b": jnp.zeros((mlp,)),
            "fc2_w": he(next(keys), (mlp, dim), mlp), "fc2_b": jnp.zeros((dim,))})
    return p, heads


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-6) * g + b


def vit_apply(p, x, heads):
    x = conv(x, p["patch_w"], p["patch_w"].shape[-1]) + p["patch_b"][None, :, None, None]
    b, d = x.shape[0], x.shape[1]
    x = x.reshape(b, d, -1).transpose(0, 2, 1)
    x = jnp.concatenate([jnp.broadcast_to(p["cls"], (b, 1, d)), x], axis=1) + p["pos"]
    for blk in p["blocks"]:
        h = layer_norm(x, blk["ln1_g"], blk["ln1_b"])
        qkv = (h @ blk["qkv_w"] + blk["qkv_b"]).reshape(b, -1, 3, heads, d // heads)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
        a = jax.nn.softmax(jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(d // heads), -1)
        h = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(b, -1, d)
        x = x + h @ blk["proj_w"] + blk["proj_b"]
        h = layer_norm(x, blk["ln2_g"], blk["ln2_b"])
        x = x + jax.nn.gelu(h @ blk["fc1_w"] + blk["fc1_b"], approximate=False) @ blk["fc2_w"] + blk["fc2_b"]
    x = layer_norm(x[:, 0], p["ln_g"], p["ln_b"])
    return x @ p["head_w"] + p["head_b"]


def xent(logits, y):
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["resnet50", "vit-tiny"], required=True)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()

    key = jax.random.PRNGKey(0)
    if a.model == "resnet50":
        params = resnet50_init(key, a.classes)
        apply = resnet50_apply
        # SGD with momentum 0.9, lr 0.1 (torch.optim.SGD's rule: v = μv + g; w -= lr·v).
        state = jax.tree_util.tree_map(jnp.zeros_like, params)

        def update(params, state, g, step):
            state = jax.tree_util.tree_map(lambda v, gi: 0.9 * v + gi, state, g)
            params = jax.tree_util.tree_map(lambda w, v: w - 0.1 * v, params, state)
            return params, state
    else:
        params, heads = vit_init(key, a.classes, a.size)
        apply = lambda p, x: vit_apply(p, x, heads)
        state = (jax.tree_util.tree_map(jnp.zeros_like, params),
                 jax.tree_util.tree_map(jnp.zeros_like, params))

        # AdamW (lr 1e-3, β 0.9/0.999, ε 1e-8, weight decay 0.05), torch's bias correction.
        def update(params, state, g, step):
            m, v = state
            m = jax.tree_util.tree_map(lambda mi, gi: 0.9 * mi + 0.1 * gi, m, g)
            v = jax.tree_util.tree_map(lambda vi, gi: 0.999 * vi + 0.001 * gi * gi, v, g)
            c1, c2 = 1 - 0.9 ** step, 1 - 0.999 ** step
            params = jax.tree_util.tree_map(
                lambda w, mi, vi: w * (1 - 1e-3 * 0.05) - 1e-3 * (mi / c1) / (jnp.sqrt(vi / c2) + 1e-8),
                params, m, v)
            return params, (m, v)

    def train_step(params, state, x, y, step):
        loss, g = jax.value_and_grad(lambda p: xent(apply(p, x), y))(params)
        params, state = update(params, state, g, step)
        return params, state, loss

    step_fn = jax.jit(train_step, donate_argnums=(0, 1))
    kx, ky = jax.random.split(jax.random.PRNGKey(1))
    x = jax.random.uniform(kx, (a.batch, 3, a.size, a.size), jnp.float32, -1, 1)
    y = jax.random.randint(ky, (a.batch,), 0, a.classes)
    box = {"params": params, "state": state}

    def one(i):
        box["params"], box["state"], loss = step_fn(box["params"], box["state"], x, y,
                                                    jnp.float32(i))
        return loss.block_until_ready()

    time_steps(one, a.warmup, a.steps, a.batch,
               f"jax {a.model} batch {a.batch} on {jax.devices()[0].platform}")

if __name__ == "__main__":
    main()
