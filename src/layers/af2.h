// Helpers shared by the AlphaFold-2 kinds (pairTile, evoformerBlock, structureModule), written
// from openfold's modules on channels-last tensors: the pair map z [B, L, L, C], the residue
// track m [B, L, C]. Parameters are declared up front in openfold's module order (its state_dict
// order), then applied, so the declaring helpers return handles instead of applying at once.
#pragma once
#include <string>

#include "layers/lower.h"

namespace netspec::layers::af2 {

// The residue track: the input [B, L, ch] of the latest pairTile before this layer.
Value* residue_track(const LowerCtx& c, int64_t l, int64_t ch);
// The pair map's per-sample shape [pair_ch, L, L]; refuses a map that is not square.
Fm pair_map(const LowerCtx& c, int64_t pair_ch);

// openfold's Linear inits that differ from PyTorch's default: final (W = 0, b = 0: the residual
// branches and the backbone update start at zero) and gating (W = 0, b = 1).
enum class Init { standard, final_, gating };

// nn.Linear "<name>.weight" [out, in] (+ ".bias" [out]) declared now, applied later.
struct Lin {
  Value* w = nullptr;
  Value* b = nullptr;
  Value* operator()(hlo::Builder& bd, Value* x) const { return linear_apply(bd, x, w, b); }
};
Lin declare_linear(LowerCtx& c, const std::string& name, int64_t in, int64_t out, bool bias,
                   Init init = Init::standard);
// nn.LayerNorm "<name>.weight" / ".bias" [d] declared now, applied over the last dim later.
struct Ln {
  Value* g = nullptr;
  Value* b = nullptr;
  Value* operator()(LowerCtx& c, Value* x) const {
    return layer_norm(c, x, g, b, x->type.rank() - 1);
  }
};
Ln declare_ln(LowerCtx& c, const std::string& name, int64_t d);

// openfold's gated Attention "<name>.linear_q/k/v" (no bias), ".linear_o", ".linear_g":
// self-attention along dim 2 of x [B, R, T, C] within each row r, heads of 32 channels:
// o = linear_o(sigmoid(linear_g(x)) ⊙ softmax(q·kᵀ/√32 + bias)·v), bias [B, H, T, T] shared by
// every row (nullptr: none).
Value* gated_attention(LowerCtx& c, const std::string& name, Value* x, int64_t heads, Value* bias);

// Softmax over the last dim (max subtracted).
Value* softmax_last(hlo::Builder& b, Value* s);
// [B, C, L, L] <-> [B, L, L, C]
Value* to_channels_last(hlo::Builder& b, Value* x);
Value* to_channels_first(hlo::Builder& b, Value* x);

}  // namespace netspec::layers::af2
