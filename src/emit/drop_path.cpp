// Keep-mask inputs of the train step and loss: stochastic depth (dropPath) per residual branch
// and classifier dropout. The masks are drawn on the host (train/stepper.cpp) so the module stays
// pure and a run is reproducible from its seed; here we only decide which masks exist and their
// rates, by a dry run of the train-mode forward graph that records every drop_path call.
#include <fmt/format.h>

#include <map>
#include <utility>

#include "core/error.h"
#include "emit/emit.h"
#include "emit/signature.h"

namespace netspec::emit {
namespace {

// Ramp families (the kind's traits): blocks of one family share one ramp over the net.
std::pair<std::string, layers::Ramp> family(const std::string& kind) {
  const layers::LayerTraits& t = layers::traits(kind);
  if (t.ramp == layers::Ramp::none || !t.ramp_family)
    fail("emit drop_path", "no stochastic-depth ramp for layer kind {}", kind);
  return {t.ramp_family, t.ramp};
}

// Kinds with a drop-path ramp, for messages.
std::string ramp_kinds() {
  std::vector<std::string_view> ks;
  for (std::string_view k : layer_kind_names())
    if (layers::traits(k).ramp != layers::Ramp::none) ks.push_back(k);
  return fmt::format("{}", fmt::join(ks, ", "));
}

}  // namespace

std::vector<double> drop_path_rates(const std::vector<layers::DropPathBlock>& blocks, double p) {
  // Ordinal of each distinct (layer, block) within its family, and the family's block count.
  std::map<std::string, int> count;
  std::map<std::pair<int, int>, int> ordinal;
  for (const auto& d : blocks) {
    auto key = std::make_pair(d.layer, d.block);
    if (!ordinal.contains(key)) ordinal[key] = count[family(d.kind).first]++;
  }
  std::vector<double> r;
  for (const auto& d : blocks) {
    auto [fam, ramp] = family(d.kind);
    const double i = ordinal.at({d.layer, d.block});
    const double n = count.at(fam);
    if (ramp == layers::Ramp::count)  // torchvision EfficientNet: p · block_id / total_blocks
      r.push_back(p * i / n);
    else  // torchvision ConvNeXt p · block_id / (total - 1); timm linspace(0, p, N)
      r.push_back(n > 1 ? p * i / (n - 1) : 0.0);
  }
  return r;
}

size_t classifier_layer(const NetSpec& net) {
  for (size_t i = net.layers.size(); i-- > 0;)
    if (layers::traits(net.layers[i]).classifier) return i;
  fail("emit dropout", "net {} has no dense classifier layer for dropout", net.name);
}

void bind_masks(const hlo::Func* f, size_t first, const std::vector<TensorInfo>& masks,
                layers::DropPath& drop, hlo::Value*& dropout) {
  for (size_t k = 0; k < masks.size(); ++k) {
    hlo::Value* a = f->arg(first + k);
    if (masks[k].name == "dropout")
      dropout = a;
    else
      drop.masks.push_back(a);
  }
}

std::vector<TensorInfo> train_masks(const NetSpec& net, const ParamTable& t, const EmitOptions& o) {
  std::vector<TensorInfo> masks;
  if (o.drop_path > 0) {
    // Dry run in a scratch module: which blocks ask for a mask, in emission order.
    hlo::Module scratch;
    std::vector<hlo::Type> types;
    for (const auto& p : t.params) types.push_back(hlo::Type::tensor(o.dtype, p.shape));
    types.push_back(input_type(net, t, o));
    hlo::Func* f = scratch.add_func("dry", types);
    hlo::Builder b(f->body.get());
    std::vector<hlo::Value*> params;
    for (size_t i = 0; i < t.params.size(); ++i) params.push_back(f->arg(i));
    layers::DropPath rec;
    emit_forward_graph(b, net, t, params, f->arg(t.params.size()), true, {}, &rec);
    if (rec.blocks.empty())
      fail("emit drop_path", "dropPath {} > 0 but net {} has no block with stochastic depth ({})",
           o.drop_path, net.name, ramp_kinds());
    std::vector<double> rates = drop_path_rates(rec.blocks, o.drop_path);
    for (size_t k = 0; k < rec.blocks.size(); ++k) {
      const auto& d = rec.blocks[k];
      if (!d.residual) continue;
      std::string name = fmt::format("layer{}.block{}.drop_path", d.layer, d.block);
      if (d.branch > 0) name += std::to_string(d.branch);
      masks.push_back({name, {o.batch}, o.dtype, "mask", 0, rates[k]});
    }
  }
  if (o.dropout > 0) {
    const LayerInfo& cls = t.layers.at(classifier_layer(net));
    masks.push_back({"dropout", with_batch(o.batch, cls.in), o.dtype, "mask", 0, o.dropout});
  }
  return masks;
}

}  // namespace netspec::emit
