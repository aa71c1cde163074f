#!/usr/bin/env bash
# ctest's jax_emit_light|more|heavy|f64 tests: the emitted JAX program's train_step against
# netspec's own (tests/jax/check_jax.py), in the oracle venv (jax there).
#   run_jax.sh NETSPEC_BIN BUILD_DIR light|more|heavy|f64
# Exit 77 (ctest SKIP) when BUILD_DIR/venv or its jax is missing (scripts/install-oracles.sh).
# `light` (the cheap nets, every optimizer, JAX's StableHLO through netspec run, every zoo net
# emits) runs in CI; `more` (mid-size nets and protein-fold), `heavy` (the BN-free ImageNet nets
# in f32 and the forwards against torchvision/timm) and `f64` (the BN nets, both sides in f64:
# at batch 2 they are too ill-conditioned for an f32 comparison) would exceed CI's budget and run
# only with NETSPEC_JAX_FULL=1.
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
# Cheap nets at full size (tiny-gpt-rope twice: flash attention's custom VJP translated, and
# JAX's own gradient of its forward); the others at batch 2 and a 64x64 input where the spec
# allows (ViT-style nets with a fixed patch count keep 224).
light=linear,mlp,mnist-cnn,cifar-bn,cifar-cnn,cifar-hybrid,vit-cifar-tiny,tiny-gpt,tiny-gpt-rope,tiny-gpt-rope@_jaxgrad=1,wavenet
# mamba-lm twice too: its selective scan's custom VJP, and JAX's gradient of the scan loop.
light+=,mamba-lm,mamba-lm@_jaxgrad=1
# Causal flash attention over 3 key blocks (its query-tiled loops), both gradients.
light+=,$here/gpt-causal-384.json,$here/gpt-causal-384.json@_jaxgrad=1
more=mobilevit-small,nerf,ddpm-unet,ddpm-unet-gn,protein-fold
# The optimizers and their options on the mlp (Shampoo's L, R state slots must be PSD).
opts='mlp@optimizer="sgd";momentum=0.9;nesterov=true;weightDecay=0.0005,mlp@optimizer="sgd";momentum=0,mlp@optimizer="rmsprop";momentum=0.9;weightDecay=0.001,mlp@optimizer="lamb";weightDecay=0.01,mlp@optimizer="adam";weightDecay=0.05;gradClipNorm=0.5;headLrMult=0.1,mlp@optimizer="muon",mlp@optimizer="shampoo";_state=psd'
heavy=convnext-tiny,swin-tiny,vit-tiny,mobilenet-v3-small,squeezenet
f64=resnet18-cifar,mobilenet-v2-cifar,protein-fold,resnet18,resnet34,resnet50,mobilenet-v1,mobilenet-v2,mobilenet-v3-large,mobilenet-v4-conv-medium,shufflenet-v1,shufflenet-v2,googlenet,densenet121,efficientnet-b0,efficientnet-v2-s,mobilevit-s,unet,deeplab-aspp,fpn-seg,fpn-det,yolo-csp,detr
shrink=resnet18=64,resnet34=64,resnet50=64,mobilenet-v1=64,mobilenet-v2=64,mobilenet-v3-small=64,mobilenet-v3-large=64,mobilenet-v4-conv-medium=64,shufflenet-v1=64,shufflenet-v2=64,squeezenet=64,googlenet=64,densenet121=64,efficientnet-b0=64,efficientnet-v2-s=64,convnext-tiny=64,unet=64,mobilevit-s=64,deeplab-aspp=64,fpn-seg=64,fpn-det=64,yolo-csp=64,detr=64
run() { exec "$py" "$here/check_jax.py" --netspec "$netspec" --work "$work" "$@"; }
case $set in
  light) run --nets "$light,$opts" --jax-text --reference resnet18=resnet18 \
    --zoo "$light,$more,$heavy,$f64" ;;
  # Direct convolutions for `more`: at batch 2 ddpm-unet's BN layers amplify Winograd's own
  # rounding (F(4x4, 3x3), checked against f64 in CpuWinograd) to 1.2e-4 in layers.6.conv1's
  # weight (3.3e-5 allowed; 7.3e-6 with direct convs, session 33), on the 8- and 16-lane kernels
  # alike. These checks are about the emitter's semantics.
  more) NETSPEC_CPU_WINOGRAD=0 run --nets "$more" ;;
  heavy) run --nets "$heavy" --batch 2 --shrink "$shrink" --reference \
    mobilenet-v2=mobilenet_v2,convnext-tiny=convnext_tiny,shufflenet-v2=shufflenet_v2_x1_0,resnet50=resnet50,squeezenet=squeezenet1_1,mobilenet-v3-large=mobilenet_v3_large,efficientnet-b0=efficientnet_b0,densenet121=densenet121,mobilenet-v4-conv-medium=timm:mobilenetv4_conv_medium,mobilevit-s=timm:mobilevit_s,vit-tiny=timm:vit_tiny_patch16_224 ;;
  f64) run --nets "$f64" --batch 2 --shrink "$shrink" --dtype f64 ;;
  *) echo "run_jax.sh: unknown set '$set' (expected light, more, heavy or f64)"; exit 2 ;;
esac
