#!/usr/bin/env bash
# ctest's jax_emit_light|more|heavy tests: the emitted JAX program's train_step against netspec's
# own (tests/jax/check_jax.py), in the oracle venv (jax there).
#   run_jax.sh NETSPEC_BIN BUILD_DIR light|more|heavy
# Exit 77 (ctest SKIP) when BUILD_DIR/venv or its jax is missing (scripts/install-oracles.sh).
# `light` (the cheap nets, every optimizer, JAX's StableHLO through netspec run) runs in CI; `more`
# (mid-size nets, ~15 CPU-minutes) and `heavy` (25 ImageNet-size nets at batch 2, ~45
# CPU-minutes) would exceed CI's budget and run only with NETSPEC_JAX_FULL=1.
set -euo pipefail
netspec=$1 build=$2 set=$3
here=$(cd "$(dirname "$0")" && pwd)
py="$build/venv/bin/python"
if [[ ! -x $py ]] || ! "$py" -c "import jax" 2>/dev/null; then
  echo "SKIP: no oracle venv with jax at $build/venv (run scripts/install-oracles.sh $build)"
  exit 77
fi
if [[ $set != light && ${NETSPEC_JAX_FULL:-0} != 1 ]]; then
  echo "SKIP: jax_emit_$set runs only with NETSPEC_JAX_FULL=1 (too long for CI)"
  exit 77
fi
work="$build/jax_emit/$set"
rm -rf "$work"
# Cheap nets at full size; heavy ones at batch 2 (and a smaller input where the spec allows).
light=linear,mlp,mnist-cnn,cifar-bn,cifar-cnn,cifar-hybrid,vit-cifar-tiny,tiny-gpt,tiny-gpt-rope,wavenet
more=resnet18-cifar,mobilenet-v2-cifar,mobilevit-small,nerf,mamba-lm,ddpm-unet
# The optimizers and their options on the mlp (Shampoo's L, R state slots must be PSD).
opts='mlp@optimizer="sgd";momentum=0.9;nesterov=true;weightDecay=0.0005,mlp@optimizer="sgd";momentum=0,mlp@optimizer="rmsprop";momentum=0.9;weightDecay=0.001,mlp@optimizer="lamb";weightDecay=0.01,mlp@optimizer="adam";weightDecay=0.05;gradClipNorm=0.5;headLrMult=0.1,mlp@optimizer="muon",mlp@optimizer="shampoo";_state=psd'
heavy=resnet18,resnet34,resnet50,mobilenet-v1,mobilenet-v2,mobilenet-v3-small,mobilenet-v3-large,mobilenet-v4-conv-medium,shufflenet-v1,shufflenet-v2,squeezenet,googlenet,densenet121,efficientnet-b0,efficientnet-v2-s,convnext-tiny,swin-tiny,vit-tiny,mobilevit-s,unet,deeplab-aspp,fpn-seg,fpn-det,yolo-csp,detr
shrink=resnet18=64,resnet34=64,resnet50=64,mobilenet-v1=64,mobilenet-v2=64,mobilenet-v3-small=64,mobilenet-v3-large=64,mobilenet-v4-conv-medium=64,shufflenet-v1=64,shufflenet-v2=64,squeezenet=64,googlenet=64,densenet121=64,efficientnet-b0=64,efficientnet-v2-s=64,convnext-tiny=64,unet=64,mobilevit-s=64,deeplab-aspp=64,fpn-seg=64,fpn-det=64,yolo-csp=64,detr=64
if [[ $set == light ]]; then
  exec "$py" "$here/check_jax.py" --netspec "$netspec" --work "$work" --nets "$light,$opts" --jax-text \
  --reference resnet18=resnet18
fi
if [[ $set == more ]]; then
  exec "$py" "$here/check_jax.py" --netspec "$netspec" --work "$work" --nets "$more"
fi
exec "$py" "$here/check_jax.py" --netspec "$netspec" --work "$work" --nets "$heavy" --batch 2 \
  --shrink "$shrink" --reference mobilenet-v2=mobilenet_v2,convnext-tiny=convnext_tiny,shufflenet-v2=shufflenet_v2_x1_0
