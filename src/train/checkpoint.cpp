// Checkpoint save/load (see checkpoint.h).
#include "train/checkpoint.h"

#include <cstdio>
#include <cstdlib>

#include "core/error.h"
#include "core/safetensors.h"

namespace netspec::train {
namespace {

void load_into(const SafeTensors& st, const std::string& name, Tensor& dst,
               const std::string& path) {
  const Tensor& src = st.at(name);
  if (src.shape() != dst.shape() || src.dtype() != dst.dtype())
    fail("train", "{}: tensor '{}' does not match the net (got {}, expected {})", path, name,
         src.type_str(), dst.type_str());
  dst = src.clone();
}

std::string meta(const SafeTensors& st, const std::string& key, const std::string& path,
                 const std::string& fallback = "") {
  auto it = st.metadata.find(key);
  if (it != st.metadata.end()) return it->second;
  if (!fallback.empty()) return fallback;
  fail("train", "{}: checkpoint metadata has no '{}'", path, key);
}

}  // namespace

TrainState make_state(std::vector<Tensor> params, const emit::Manifest& sm,
                      const emit::Manifest& em) {
  TrainState s;
  s.params = std::move(params);
  for (const auto& ti : sm.inputs)
    if (ti.role == "optimizer_state") {
      s.opt.emplace_back(ti.dtype, ti.shape);
      s.opt_names.push_back(ti.name);
    }
  for (const auto& ti : em.inputs)
    if (ti.role == "bn_running_stat") {
      Tensor r(ti.dtype, ti.shape);
      if (s.running.size() % 2 == 1)  // mean, var interleaved: var starts at 1
        for (float& v : r.span<float>()) v = 1.f;
      s.running.push_back(std::move(r));
      s.running_names.push_back(ti.name);
    }
  return s;
}

void save_checkpoint(const std::string& path, const ParamTable& t, const TrainState& s,
                     const std::string& net) {
  SafeTensors st;
  for (size_t i = 0; i < s.params.size(); ++i)
    st.tensors.emplace_back(t.params[i].name, s.params[i]);
  for (size_t i = 0; i < s.opt.size(); ++i) st.tensors.emplace_back(s.opt_names[i], s.opt[i]);
  for (size_t i = 0; i < s.running.size(); ++i)
    st.tensors.emplace_back(s.running_names[i], s.running[i]);
  st.metadata = {{"net", net},
                 {"epoch", std::to_string(s.epoch)},
                 {"step", std::to_string(s.step)},
                 {"batch_in_epoch", std::to_string(s.batch_in_epoch)},
                 {"loss_sum", fmt::format("{:a}", s.loss_sum)},
                 {"format", "netspec-checkpoint-2"}};
  write_safetensors(path, st);
}

void load_checkpoint(const std::string& path, const ParamTable& t, TrainState& s,
                     bool with_optimizer) {
  SafeTensors st = read_safetensors(path);
  for (size_t i = 0; i < s.params.size(); ++i) load_into(st, t.params[i].name, s.params[i], path);
  if (with_optimizer)
    for (size_t i = 0; i < s.opt.size(); ++i) load_into(st, s.opt_names[i], s.opt[i], path);
  for (size_t i = 0; i < s.running.size(); ++i)
    load_into(st, s.running_names[i], s.running[i], path);
  try {
    s.epoch = std::stoi(meta(st, "epoch", path));
    s.step = std::stoll(meta(st, "step", path));
    s.batch_in_epoch = std::stoll(meta(st, "batch_in_epoch", path, "0"));
    s.loss_sum = std::strtod(meta(st, "loss_sum", path, "0").c_str(), nullptr);
    const std::string fmt_name = meta(st, "format", path, "netspec-checkpoint-1");
    const std::string prefix = "netspec-checkpoint-";
    if (fmt_name.rfind(prefix, 0) != 0)
      fail("train", "{}: not a netspec checkpoint (format '{}')", path, fmt_name);
    s.format = std::stoi(fmt_name.substr(prefix.size()));
    if (s.format < 1 || s.format > 2)
      fail("train", "{}: checkpoint format {} is newer than this netspec reads (1..2)", path,
           s.format);
  } catch (const std::logic_error&) {
    fail("train", "{}: checkpoint metadata epoch/step/format are not numbers", path);
  }
}

}  // namespace netspec::train
