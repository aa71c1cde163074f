// The layer-kind -> emitter table, the lowering context and the shared broadcast helpers.
#include "layers/lower.h"

#include <fmt/format.h>

#include <map>

#include "core/error.h"

namespace netspec::layers {
namespace {

// kind -> emitter, filled by each src/layers/<kind>.cpp's NETSPEC_REGISTER_LAYER line before
// main (a function-local static, so registration order across files does not matter).
std::map<std::string_view, Emitter>& table() {
  static std::map<std::string_view, Emitter> t;
  return t;
}

}  // namespace

std::string LowerCtx::where() const { return fmt::format("layer {} {}", info.index, info.kind); }

Value* LowerCtx::tap(const char* what, int64_t ch, int64_t h, int64_t w) const {
  if (!history) fail(where(), "no earlier layer outputs are available to tap for {}", what);
  for (size_t i = history->size(); i-- > 0;) {
    const auto& s = (*history)[i]->type.shape();
    if (s.size() == 4 && s[1] == ch && s[2] == h && s[3] == w) return (*history)[i];
  }
  fail(where(), "no earlier output for {} with {} channels at {}x{}", what, ch, h, w);
}

Value* LowerCtx::next_param() {
  if (param_pos >= params.size())
    fail(where(), "emitter asks for parameter {} (got {} from the ParamTable)", param_pos + 1,
         params.size());
  return params[param_pos++];
}

BnStats LowerCtx::next_running() {
  if (bn_pos >= running.size())
    fail(where(), "emitter asks for BN running stats {} (got {})", bn_pos + 1, running.size());
  return running[bn_pos++];
}

void LowerCtx::finish() const {
  if (param_pos != params.size())
    fail(where(), "emitter used {} parameters (expected {} from the ParamTable)", param_pos,
         params.size());
  if (!train && bn_pos != running.size())
    fail(where(), "emitter used {} BN layers (expected {})", bn_pos, running.size());
}

Value* LowerCtx::drop_path(Value* branch, int block, int branch_id, bool residual) {
  if (!train || !drop) return branch;
  drop->blocks.push_back({info.index, info.kind, block, branch_id, residual});
  if (!residual || drop->masks.empty()) return branch;
  if (drop->used >= drop->masks.size())
    fail(where(), "drop-path mask {} requested (got {} mask inputs)", drop->used + 1,
         drop->masks.size());
  Value* m = drop->masks[drop->used++];
  // out[b, ...] = branch[b, ...] · mask[b]
  return b.multiply(branch, b.broadcast_in_dim(m, branch->type.shape(), {0}));
}

EmitterRegistrar::EmitterRegistrar(std::string_view kind, Emitter e) {
  bool known = false;
  for (std::string_view k : layer_kind_names()) known = known || k == kind;
  // A typo in a registration line would otherwise leave the kind silently unlowered.
  if (!known || !table().emplace(kind, e).second) {
    fmt::print(stderr, "netspec: bad layer registration '{}' (unknown kind or registered twice)\n",
               kind);
    std::abort();
  }
}

Emitter find_emitter(std::string_view kind) {
  auto it = table().find(kind);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string_view> lowered_kinds() {
  std::vector<std::string_view> out;
  for (std::string_view k : layer_kind_names())
    if (find_emitter(k)) out.push_back(k);
  return out;
}

void check_lowerable(const NetSpec& net) {
  for (size_t i = 0; i < net.layers.size(); ++i) {
    std::string_view kind = layer_kind(net.layers[i]);
    if (!find_emitter(kind))
      fail(fmt::format("layer {} {}", i, kind), "layer kind is not lowered yet (lowered: {})",
           fmt::join(lowered_kinds(), ", "));
  }
}

Value* lower_layer(LowerCtx& c, const Layer& layer, Value* x) {
  Emitter e = find_emitter(c.info.kind);
  if (!e)
    fail(c.where(), "layer kind is not lowered yet (lowered: {})",
         fmt::join(lowered_kinds(), ", "));
  Value* y = e(c, layer, x);
  c.finish();
  Shape want = c.info.out;
  want.insert(want.begin(), x->type.dim(0));
  if (y->type.shape() != want)
    fail(c.where(), "lowered output shape (got [{}], expected [{}])",
         fmt::join(y->type.shape(), ", "), fmt::join(want, ", "));
  return y;
}

Value* splat(hlo::Builder& b, double v, Value* like) { return b.constant_splat(v, like->type); }

Value* bcast(hlo::Builder& b, Value* v, Value* like, int64_t dim) {
  return b.broadcast_in_dim(v, like->type.shape(), {dim});
}

}  // namespace netspec::layers
