// Standalone probe modules for checking one building block in isolation with `netspec run`:
// attention (flash, dense, and their forward+backward) and rotary embeddings. Entry @main; the
// manifest names each input/output. `netspec emit --module probe-attention --probe P` writes them.
//   flash | dense:             main(q, k, v) -> o                     q, k, v, o: [B, H, T, dh]
//   flash-grad | dense-grad:   main(q, k, v, do) -> (o, dq, dk, dv)   (the VJP w.r.t. q, k, v)
//   rope | rope-grad:          main(x) -> y  |  main(x, dy) -> (y, dx)
// and the seg-loss block (probe_seg_loss.cpp, `--module probe-seg-loss --loss L`):
//   main(logits [B, NC, H, W], labels i32 [B, H, W]) -> (loss, d_logits)
#pragma once
#include <string>

#include "emit/emit.h"

namespace netspec::emit {

struct AttentionProbe {
  std::string probe = "flash";
  int64_t batch = 1, heads = 2, seq = 64, head_dim = 16;
  bool causal = false;
  int64_t block = 0;  // flash key block; 0 = the largest divisor of seq <= 256
  DType dtype = DType::kF32;
};

// The probe names accepted by emit_attention_probe, '|'-separated.
std::string attention_probe_choices();
// Builds the probe module and its manifest; refuses an unknown probe or bad sizes by name.
Emitted emit_attention_probe(const AttentionProbe& p);

struct SegLossProbe {
  losses::LossOptions loss{.kind = LossKind::perPixelCE};
  int64_t batch = 2, classes = 3, height = 4, width = 4;
  DType dtype = DType::kF32;
};
// Refuses a loss that is not per-pixel and bad sizes by name.
Emitted emit_seg_loss_probe(const SegLossProbe& p);

}  // namespace netspec::emit
