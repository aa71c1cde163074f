// The running weight averages saved beside `last` and restored on resume (averaging.h): EMA
// params + BN statistics, the SWA mean (+ its recomputed BN statistics) and count, SWAG's
// moments and deviations. Tensors "ema.<param>", "ema_bn.<stat>", "swa.<param>",
// "swa_bn.<stat>", "swag.mean.<param>" ...; metadata: the step they belong to and the counts.
#include <fmt/format.h>

#include <filesystem>

#include "core/error.h"
#include "core/safetensors.h"
#include "train/averaging.h"

namespace netspec::train {
namespace {

void put(SafeTensors& st, const std::string& prefix, const std::vector<std::string>& names,
         const std::vector<Tensor>& values) {
  for (size_t i = 0; i < values.size(); ++i)
    st.tensors.emplace_back(prefix + names.at(i), values[i]);
}

// The tensors under `prefix`, shaped like `like` (a file of another net or config is named).
std::vector<Tensor> take(const SafeTensors& st, const std::string& path, const std::string& prefix,
                         const std::vector<std::string>& names, const std::vector<Tensor>& like) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < like.size(); ++i) {
    const Tensor& t = st.at(prefix + names.at(i));
    if (t.shape() != like[i].shape() || t.dtype() != like[i].dtype())
      fail("train", "{}: {}{} is {} (expected {} as in the checkpoint)", path, prefix, names[i],
           t.type_str(), like[i].type_str());
    out.push_back(t.clone());
  }
  return out;
}

int64_t meta_int(const SafeTensors& st, const std::string& path, const std::string& key) {
  auto it = st.metadata.find(key);
  if (it == st.metadata.end()) fail("train", "{}: metadata has no '{}'", path, key);
  try {
    return std::stoll(it->second);
  } catch (const std::exception&) {
    fail("train", "{}: metadata '{}' is not an integer (got '{}')", path, key, it->second);
  }
}

std::vector<std::string> param_names(const ParamTable& t) {
  std::vector<std::string> v;
  for (const auto& p : t.params) v.push_back(p.name);
  return v;
}

}  // namespace

void Swag::restore(const SafeTensors& st, const std::string& prefix, const ParamTable& t, int64_t n,
                   int64_t devs) {
  auto load = [&](const std::string& what) {
    std::vector<Tensor> v;
    for (const auto& p : t.params) v.push_back(st.at(prefix + what + p.name).clone());
    return v;
  };
  mean_ = load("mean.");
  sq_ = load("sq_mean.");
  dev_.clear();
  for (int64_t j = 0; j < devs; ++j) dev_.push_back(load(fmt::format("dev{}.", j)));
  n_ = n;
}

void Averages::save_state(const std::string& path, const TrainState& s,
                          const std::string& net) const {
  SafeTensors st;
  const std::vector<std::string> names = param_names(table_);
  if (ema_ && !ema_state_.params.empty()) {
    put(st, "ema.", names, ema_state_.params);
    put(st, "ema_bn.", s.running_names, ema_state_.running);
  }
  if (swa_ && swa_n_ > 0) {
    put(st, "swa.", names, swa_state_.params);
    put(st, "swa_bn.", s.running_names, swa_state_.running);
  }
  if (swag_ && swag_->count() > 0)
    for (auto& [name, t] : swag_->tensors(table_)) st.tensors.emplace_back("swag." + name, t);
  st.metadata["net"] = net;
  st.metadata["step"] = std::to_string(s.step);
  st.metadata["has_ema"] = ema_state_.params.empty() ? "0" : "1";
  st.metadata["swa_models"] = std::to_string(swa_n_);
  st.metadata["swag_models"] = std::to_string(swag_ ? swag_->count() : 0);
  st.metadata["swag_devs"] = std::to_string(swag_ ? swag_->deviations() : 0);
  write_safetensors(path, st);
}

std::string Averages::load_state(const std::string& path, const TrainState& s) {
  namespace fs = std::filesystem;
  if (!fs::exists(path))
    return fmt::format("weight averages restart at step {}: {} is missing", s.step, path);
  SafeTensors st = read_safetensors(path);
  const int64_t step = meta_int(st, path, "step");
  if (step != s.step)
    return fmt::format(
        "weight averages restart at step {}: {} belongs to step {} (a kill between the two "
        "writes)",
        s.step, path, step);
  const std::vector<std::string> names = param_names(table_);
  if (ema_ && meta_int(st, path, "has_ema") == 1) {
    ema_state_ = s;
    ema_state_.opt.clear();
    ema_state_.params = take(st, path, "ema.", names, s.params);
    ema_state_.running = take(st, path, "ema_bn.", s.running_names, s.running);
  }
  swa_n_ = swa_ ? meta_int(st, path, "swa_models") : 0;
  if (swa_n_ > 0) {
    swa_state_ = s;
    swa_state_.opt.clear();
    swa_state_.params = take(st, path, "swa.", names, s.params);
    swa_state_.running = take(st, path, "swa_bn.", s.running_names, s.running);
  }
  if (swag_ && meta_int(st, path, "swag_models") > 0)
    swag_->restore(st, "swag.", table_, meta_int(st, path, "swag_models"),
                   meta_int(st, path, "swag_devs"));
  return "";
}

}  // namespace netspec::train
