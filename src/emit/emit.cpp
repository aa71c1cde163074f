// emit_module dispatch, options from a TrainConfig, names and manifests.
#include "emit/emit.h"

#include "emit/signature.h"
#include "exec/replicas.h"
#include "layers/param_table.h"

namespace netspec::emit {

EmitOptions EmitOptions::from_train(const TrainConfig& t, int64_t batch) {
  EmitOptions o;
  o.batch = batch;
  o.loss = losses::LossOptions::from_train(t);
  o.optim = optim::OptimConfig::from_train(t);
  o.drop_path = t.dropPath;
  o.dropout = t.dropout;
  o.sync_bn = t.syncBN;
  o.precision = {t.bf16, t.bf16 && t.bf16Conv};
  return o;
}

hlo::Type input_type(const NetSpec& net, const ParamTable& t, const EmitOptions& o) {
  const auto* first = net.layers.empty() ? nullptr : &layers::traits(net.layers[0]);
  bool ids = first && first->ids_input && first->ids_input(net.layers[0]);
  return hlo::Type::tensor(ids ? DType::kI32 : o.dtype, with_batch(o.batch, t.input));
}

std::string sanitize(const std::string& name) {
  std::string s = name.empty() ? "net" : name;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
  if (std::isdigit(static_cast<unsigned char>(s[0]))) s = "n" + s;
  return s;
}

Manifest make_manifest(const NetSpec& net, ModuleKind kind, const EmitOptions& o,
                       const Signature& in, const Signature& out) {
  Manifest m;
  m.module = std::string(enum_name(kind));
  m.net = net.name;
  m.batch = o.batch;
  m.replicas = o.replicas;
  m.sync_bn = o.replicas > 1 && o.sync_bn;
  m.inputs = in.infos;
  // Batch-carrying inputs are split across replicas (x, labels, masks; never params or state).
  if (o.replicas > 1)
    for (auto& ti : m.inputs)
      ti.sharded = ti.role == "input" || ti.role == "label" || ti.role == "mask";
  m.outputs = out.infos;
  return m;
}

Emitted emit_module(const NetSpec& net, ModuleKind kind, const EmitOptions& o) {
  layers::check_lowerable(net);
  return emit_module(net, build_param_table(net), kind, o);
}

Emitted emit_module(const NetSpec& net, const ParamTable& t, ModuleKind kind,
                    const EmitOptions& o) {
  if (o.batch < 1) fail("emit", "batch must be >= 1 (got {})", o.batch);
  if (o.replicas < 1 || o.replicas > exec::kMaxReplicas)
    fail("emit", "replicas must be in 1..{} (got {})", exec::kMaxReplicas, o.replicas);
  layers::check_lowerable(net);
  if (kind == ModuleKind::forward || kind == ModuleKind::eval || kind == ModuleKind::cam)
    return emit_forward_like(net, t, kind, o);
  if (kind == ModuleKind::grad_cam) return emit_grad_cam(net, t, o);
  EmitOptions bound = o;
  bound.loss = losses::for_net(o.loss, net);  // detector losses take the head's anchor count
  return emit_train_like(net, t, kind, bound);
}

}  // namespace netspec::emit
