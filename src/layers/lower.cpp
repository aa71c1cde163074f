// The layer-kind table (bodies and traits), the context both modes share and the broadcast
// helpers.
#include "layers/lower.h"

#include <map>

namespace netspec::layers {
namespace {

struct Entry {
  Emitter fn;
  LayerTraits traits;
};

// kind -> body, filled by each src/layers/<kind>.cpp's NETSPEC_REGISTER_LAYER line before
// main (a function-local static, so registration order across files does not matter).
std::map<std::string_view, Entry>& table() {
  static std::map<std::string_view, Entry> t;
  return t;
}

}  // namespace

std::string dot(const std::string& a, const char* b) { return a.empty() ? b : a + "." + b; }

std::string LowerCtx::where() const { return fmt::format("layer {} {}", info.index, info.kind); }

void LowerCtx::positive(const char* field, int64_t v, int64_t lo) const {
  if (v < lo) fail("{} must be >= {} (got {})", field, lo, v);
}

Fm LowerCtx::image(int64_t ch) const {
  const Shape& in = info.in;
  if (in.size() != 3) fail("expects an image [C, H, W] input (got [{}])", fmt::join(in, ", "));
  if (ch >= 0 && in[0] != ch) fail("input channels (got {}, expected {})", in[0], ch);
  return {in[0], in[1], in[2]};
}

int64_t LowerCtx::tokens(int64_t d) const {
  const Shape& in = info.in;
  if (in.size() != 2) fail("expects a token sequence [T, D] input (got [{}])", fmt::join(in, ", "));
  if (d >= 0 && in[1] != d) fail("input feature dim (got {}, expected {})", in[1], d);
  return in[0];
}

int64_t LowerCtx::vec(int64_t d) const {
  const Shape& in = info.in;
  if (in.size() != 1) fail("expects a vector [D] input (got [{}])", fmt::join(in, ", "));
  if (d >= 0 && in[0] != d) fail("input features (got {}, expected {})", in[0], d);
  return d;
}

void LowerCtx::channels_match(const char* what, int64_t got, int64_t expected) const {
  if (got != expected) fail("{} (got {}, expected {})", what, got, expected);
}

// The most parameter tensors a net may declare (ResNet-152 has ~470, ViT-L ~300).
constexpr size_t kMaxParamTensors = 20000;

std::string LowerCtx::full(const std::string& leaf) const {
  std::string s = fmt::format("layers.{}", info.index);
  for (const auto& p : scope) s += "." + p;
  if (!leaf.empty()) s += "." + leaf;
  return s;
}

Value* LowerCtx::param(const std::string& leaf, const Shape& shape, ParamInit init, bool decay) {
  std::string name = full(leaf);
  if (acct) {
    for (int64_t d : shape)
      if (d <= 0) fail("parameter {} has a non-positive dim ([{}])", name, fmt::join(shape, ", "));
    // Real nets declare hundreds; a repeat count such as nBlocks = 2e9 is stopped here.
    if (acct->table.params.size() >= kMaxParamTensors)
      fail("the net declares more than {} parameter tensors (is a repeat count such as nBlocks "
           "too large?)",
           kMaxParamTensors);
    ParamDesc p{name, shape, init, decay, info.index};
    acct->info.params = checked_add(acct->info.params, p.numel(), "params");
    ++acct->info.num_params;
    acct->table.params.push_back(std::move(p));
    return acct->body->add_arg(hlo::Type::tensor(DType::kF32, shape));
  }
  if (param_pos >= params.size())
    fail("declares parameter {} {} (got {} from the ParamTable)", param_pos + 1, name,
         params.size());
  if (table) {
    const ParamDesc& p = table->params.at(info.first_param + param_pos);
    if (p.name != name || p.shape != shape)
      fail("internal: parameter {} declared as {} [{}] (expected {} [{}] from the ParamTable)",
           param_pos + 1, name, fmt::join(shape, ", "), p.name, fmt::join(p.shape, ", "));
  }
  return params[param_pos++];
}

Bn LowerCtx::bn(const std::string& name, int64_t ch) {
  Bn r;
  r.gamma = param(dot(name, "weight"), {ch}, ParamInit::ones, false);
  r.beta = param(dot(name, "bias"), {ch}, ParamInit::zeros, false);
  if (acct) {
    acct->table.bns.push_back({full(name), ch, info.index});
    ++acct->info.num_bn;
  } else if (!train) {
    if (bn_pos >= running.size())
      fail("declares BN {} {} (got {} running stats)", bn_pos + 1, full(name), running.size());
    r.running = running[bn_pos];
  }
  ++bn_pos;
  return r;
}

Value* LowerCtx::not_lowered(const Shape& out) {
  if (!acct) fail("layer kind is not lowered yet (lowered: {})", fmt::join(lowered_kinds(), ", "));
  Shape s{1};
  s.insert(s.end(), out.begin(), out.end());
  return acct->body->add_arg(hlo::Type::tensor(DType::kF32, s));
}

Value* LowerCtx::tap(const char* what, int64_t ch, int64_t h, int64_t w) const {
  if (!history) fail("no earlier layer outputs are available to tap for {}", what);
  for (size_t i = history->size(); i-- > 0;) {
    const auto& s = (*history)[i]->type.shape();
    if (s.size() == 4 && s[1] == ch && s[2] == h && s[3] == w) return (*history)[i];
  }
  fail("no earlier output for {} with {} channels at {}x{}", what, ch, h, w);
}

void LowerCtx::finish() const {
  if (acct) return;
  if (param_pos != params.size())
    fail("declared {} parameters (expected {} from the ParamTable)", param_pos, params.size());
  if (!train && bn_pos != running.size())
    fail("declared {} BN layers (expected {})", bn_pos, running.size());
}

Value* LowerCtx::drop_path(Value* branch, int block, int branch_id, bool residual) {
  if (!train || !drop) return branch;
  drop->blocks.push_back({info.index, info.kind, block, branch_id, residual});
  if (!residual || drop->masks.empty()) return branch;
  if (drop->used >= drop->masks.size())
    fail("drop-path mask {} requested (got {} mask inputs)", drop->used + 1, drop->masks.size());
  Value* m = drop->masks[drop->used++];
  // out[b, ...] = branch[b, ...] · mask[b]
  return b.multiply(branch, b.broadcast_in_dim(m, branch->type.shape(), {0}));
}

EmitterRegistrar::EmitterRegistrar(std::string_view kind, Emitter e, LayerTraits t) {
  bool known = false;
  for (std::string_view k : layer_kind_names()) known = known || k == kind;
  // A typo in a registration line would otherwise leave the kind silently without a body.
  if (!known || !table().emplace(kind, Entry{e, t}).second) {
    fmt::print(stderr, "netspec: bad layer registration '{}' (unknown kind or registered twice)\n",
               kind);
    std::abort();
  }
}

Emitter find_emitter(std::string_view kind) {
  auto it = table().find(kind);
  return it == table().end() ? nullptr : it->second.fn;
}

const LayerTraits& traits(std::string_view kind) {
  static const LayerTraits kNone{.lowered = false};
  auto it = table().find(kind);
  return it == table().end() ? kNone : it->second.traits;
}

const LayerTraits& traits(const Layer& layer) { return traits(layer_kind(layer)); }

std::vector<std::string_view> lowered_kinds() {
  std::vector<std::string_view> out;
  for (std::string_view k : layer_kind_names())
    if (find_emitter(k) && traits(k).lowered) out.push_back(k);
  return out;
}

void check_lowerable(const NetSpec& net) {
  for (size_t i = 0; i < net.layers.size(); ++i) {
    std::string_view kind = layer_kind(net.layers[i]);
    if (!find_emitter(kind) || !traits(kind).lowered)
      fail(fmt::format("layer {} {}", i, kind), "layer kind is not lowered yet (lowered: {})",
           fmt::join(lowered_kinds(), ", "));
  }
}

// Every int field >= its LayerTraits::field_min bound (1 unless listed), in field order.
void check_int_fields(const LowerCtx& c, const Layer& layer) {
  const auto& mins = traits(c.info.kind).field_min;
  std::visit(
      [&](const auto& l) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(l)>, std::monostate>)
          l.visit([&](const char* name, const auto& v, bool) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, int>) {
              int lo = 1;
              for (const auto& [f, m] : mins)
                if (f == name) lo = m;
              c.positive(name, v, lo);
            }
          });
      },
      layer);
}

Value* lower_layer(LowerCtx& c, const Layer& layer, Value* x) {
  Emitter e = find_emitter(c.info.kind);
  if (!e || (!c.acct && !traits(c.info.kind).lowered))
    c.fail("layer kind is not lowered yet (lowered: {})", fmt::join(lowered_kinds(), ", "));
  if (c.acct) check_int_fields(c, layer);
  Value* y = e(c, layer, x);
  c.finish();
  if (c.acct) return y;
  Shape want = c.info.out;
  want.insert(want.begin(), x->type.dim(0));
  if (y->type.shape() != want)
    c.fail("lowered output shape (got [{}], expected [{}])", fmt::join(y->type.shape(), ", "),
           fmt::join(want, ", "));
  return y;
}

Value* splat(hlo::Builder& b, double v, Value* like) { return b.constant_splat(v, like->type); }

Value* bcast(hlo::Builder& b, Value* v, Value* like, int64_t dim) {
  return b.broadcast_in_dim(v, like->type.shape(), {dim});
}

Value* i32(hlo::Builder& b, int64_t v) { return b.scalar(double(v), DType::kI32); }

Value* block_along(hlo::Builder& b, Value* x, size_t axis, Value* start, int64_t size) {
  Shape sz = x->type.shape();
  sz[axis] = size;
  std::vector<Value*> at(sz.size(), i32(b, 0));
  at[axis] = start;
  return b.dynamic_slice(x, at, sz);
}

Value* put_block_along(hlo::Builder& b, Value* x, Value* blk, size_t axis, Value* start) {
  std::vector<Value*> at(x->type.rank(), i32(b, 0));
  at[axis] = start;
  return b.dynamic_update_slice(x, blk, at);
}

}  // namespace netspec::layers
