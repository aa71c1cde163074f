// Manifest -> JSON.
#include "emit/manifest.h"

#include <nlohmann/json.hpp>

namespace netspec::emit {
namespace {

nlohmann::ordered_json entries(const std::vector<TensorInfo>& ts) {
  auto a = nlohmann::ordered_json::array();
  for (const auto& t : ts) {
    nlohmann::ordered_json e;
    e["name"] = t.name;
    e["shape"] = t.shape;
    e["dtype"] = std::string(dtype_name(t.dtype));
    e["role"] = t.role;
    if (t.count > 0) e["count"] = t.count;
    if (t.role == "mask") e["rate"] = t.rate;
    if (t.sharded) e["sharded"] = true;
    a.push_back(std::move(e));
  }
  return a;
}

}  // namespace

std::string Manifest::to_json() const {
  nlohmann::ordered_json j;
  j["module"] = module;
  j["net"] = net;
  j["batch"] = batch;
  if (replicas > 1) {  // absent for one replica (the single-device ABI is unchanged)
    j["replicas"] = replicas;
    j["global_batch"] = batch * replicas;
    j["sync_bn"] = sync_bn;
  }
  j["entry"] = entry;
  j["inputs"] = entries(inputs);
  j["outputs"] = entries(outputs);
  return j.dump(2) + "\n";
}

}  // namespace netspec::emit
