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

bool has_tensor(const SafeTensors& st, const std::string& name) {
  for (const auto& [n, t] : st.tensors)
    if (n == name) return true;
  return false;
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
                     const std::string& net, bool with_optimizer) {
  SafeTensors st;
  for (size_t i = 0; i < s.params.size(); ++i)
    st.tensors.emplace_back(t.params[i].name, s.params[i]);
  if (with_optimizer)
    for (size_t i = 0; i < s.opt.size(); ++i) st.tensors.emplace_back(s.opt_names[i], s.opt[i]);
  for (size_t i = 0; i < s.running.size(); ++i)
    st.tensors.emplace_back(s.running_names[i], s.running[i]);
  // "format": "pt" tells Hugging Face's safetensors tools the layouts are PyTorch's.
  st.metadata = {{"format", "pt"},
                 {"netspec.format", fmt::format("netspec-checkpoint-{}", kCheckpointFormat)},
                 {"net", net},
                 {"epoch", std::to_string(s.epoch)},
                 {"step", std::to_string(s.step)},
                 {"batch_in_epoch", std::to_string(s.batch_in_epoch)},
                 {"loss_sum", fmt::format("{:a}", s.loss_sum)},
                 {"optimizer_state", with_optimizer ? "true" : "false"}};
  write_safetensors(path, st);
}

void load_checkpoint(const std::string& path, const ParamTable& t, TrainState& s,
                     bool with_optimizer) {
  SafeTensors st = read_safetensors(path);
  // Format 3 writes "format": "pt" + "netspec.format"; 1 and 2 kept netspec's name in "format";
  // a file without netspec metadata (converted torchvision weights) holds weights only.
  std::string fmt_name = meta(st, "format", path, "-");
  if (fmt_name == "pt") fmt_name = meta(st, "netspec.format", path, "-");
  const bool foreign = fmt_name == "-" && !st.metadata.count("epoch");
  if (foreign && with_optimizer)
    fail("train", "{}: holds weights only, no training state (use --init-from to start from it)",
         path);
  for (size_t i = 0; i < s.params.size(); ++i) load_into(st, t.params[i].name, s.params[i], path);
  if (with_optimizer)
    for (size_t i = 0; i < s.opt.size(); ++i) {
      if (!has_tensor(st, s.opt_names[i]))
        fail("train",
             "{}: has no optimizer state '{}' (a best checkpoint holds weights only; "
             "resume from last)",
             path, s.opt_names[i]);
      load_into(st, s.opt_names[i], s.opt[i], path);
    }
  for (size_t i = 0; i < s.running.size(); ++i)
    load_into(st, s.running_names[i], s.running[i], path);
  if (foreign) return;
  try {
    s.epoch = std::stoi(meta(st, "epoch", path));
    s.step = std::stoll(meta(st, "step", path));
    s.batch_in_epoch = std::stoll(meta(st, "batch_in_epoch", path, "0"));
    s.loss_sum = std::strtod(meta(st, "loss_sum", path, "0").c_str(), nullptr);
    if (fmt_name == "-") fmt_name = "netspec-checkpoint-1";
    const std::string prefix = "netspec-checkpoint-";
    if (fmt_name.rfind(prefix, 0) != 0)
      fail("train", "{}: not a netspec checkpoint (format '{}')", path, fmt_name);
    s.format = std::stoi(fmt_name.substr(prefix.size()));
    if (s.format < 1 || s.format > kCheckpointFormat)
      fail("train", "{}: checkpoint format {} is newer than this netspec reads (1..{})", path,
           s.format, kCheckpointFormat);
  } catch (const std::logic_error&) {
    fail("train", "{}: checkpoint metadata epoch/step/format are not numbers", path);
  }
}

}  // namespace netspec::train
