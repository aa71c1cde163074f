// Checkpoint save/load (see checkpoint.h).
#include "train/checkpoint.h"

#include <charconv>
#include <cmath>
#include <cstdint>
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
  // A NaN or inf would only show later as a "diverged" step blamed on the learning rate.
  if (is_float(src.dtype()))
    for (int64_t i = 0; i < src.numel(); ++i) {
      const double v = src.dtype() == DType::kF32 ? src.data<float>()[i] : src.as_double(i);
      if (!std::isfinite(v))
        fail("train",
             "{}: tensor '{}' holds {} at element {} (a corrupt file, or a run that diverged "
             "before this save): resume from another checkpoint or use a new run dir",
             path, name, v, i);
    }
  dst = src.clone();
}

std::string meta(const SafeTensors& st, const std::string& key, const std::string& path,
                 const std::string& fallback = "") {
  auto it = st.metadata.find(key);
  if (it != st.metadata.end()) return it->second;
  if (!fallback.empty()) return fallback;
  fail("train", "{}: checkpoint metadata has no '{}'", path, key);
}

// A whole non-negative decimal number (no sign, no spaces, no trailing text).
int64_t counter(const std::string& v, const char* field, const std::string& path) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || v[0] == '-' || v[0] == '+' || ec != std::errc() || p != v.data() + v.size())
    fail("train", "{}: metadata '{}' is not a non-negative whole number (got '{}')", path, field,
         v);
  return n;
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

std::string cursor_text(const DataCursor& c) {
  return fmt::format("epoch={} position={} seed={} samples={} batch={} replicas={}", c.epoch,
                     c.position, c.seed, c.samples, c.batch, c.replicas);
}

DataCursor parse_cursor(const std::string& text, const std::string& path) {
  DataCursor c;
  const std::pair<const char*, int64_t*> fields[] = {
      {"epoch", &c.epoch},     {"position", &c.position}, {"seed", &c.seed},
      {"samples", &c.samples}, {"batch", &c.batch},       {"replicas", &c.replicas}};
  size_t at = 0;
  for (const auto& [name, value] : fields) {
    const std::string key = std::string(at ? " " : "") + name + "=";
    const char* p = text.data() + at;
    const char* end = text.data() + text.size();
    if (text.compare(at, key.size(), key) != 0 ||
        std::from_chars(p + key.size(), end, *value).ec != std::errc())
      fail("train", "{}: metadata 'netspec.data_cursor' is not '{}' (got '{}')", path,
           "epoch=E position=P seed=S samples=N batch=B replicas=R", text);
    at = static_cast<size_t>(std::from_chars(p + key.size(), end, *value).ptr - text.data());
  }
  if (at != text.size() || c.epoch < 0 || c.position < 0 || c.samples < 0 || c.batch < 1 ||
      c.replicas < 1 || c.position > c.samples)
    fail("train", "{}: metadata 'netspec.data_cursor' is out of range (got '{}')", path, text);
  c.present = true;
  return c;
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
  if (with_optimizer && !s.policy.empty()) st.metadata.emplace("netspec.policy", s.policy);
  if (with_optimizer && s.cursor.present)
    st.metadata.emplace("netspec.data_cursor", cursor_text(s.cursor));
  write_safetensors(path, st);
}

void load_checkpoint(const std::string& path, const ParamTable& t, TrainState& s,
                     bool with_optimizer) {
  SafeTensors st = read_safetensors(path);
  // Format 3 writes "format": "pt" + "netspec.format"; 1 and 2 kept netspec's name in "format";
  // a file without netspec metadata (converted torchvision weights) holds weights only.
  std::string fmt_key = "format";
  std::string fmt_name = meta(st, fmt_key, path, "-");
  if (fmt_name == "pt") fmt_name = meta(st, fmt_key = "netspec.format", path, "-");
  const bool foreign = fmt_name == "-" && !st.metadata.count("epoch");
  if (foreign && with_optimizer)
    fail("train", "{}: holds weights only, no training state (use --init-from to start from it)",
         path);
  for (size_t i = 0; i < s.params.size(); ++i) {
    const std::string& name = t.params[i].name;
    // Another net's checkpoint: say whose it is (the "net" metadata) rather than which of its
    // tensor names this net lacks.
    if (!has_tensor(st, name) && st.metadata.count("net"))
      fail("train", "{}: this checkpoint is for {} (it has no tensor '{}' that this net needs)",
           path, st.metadata.at("net"), name);
    load_into(st, name, s.params[i], path);
  }
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
  // Metadata is validated as strictly as the tensors: whole non-negative decimal numbers, a
  // finite loss sum and a known format (1..kCheckpointFormat); a bad value names the file and
  // field.
  if (fmt_name == "-") fmt_name = "netspec-checkpoint-1";
  const std::string prefix = "netspec-checkpoint-";
  if (fmt_name.rfind(prefix, 0) != 0)
    fail("train", "{}: not a netspec checkpoint (metadata '{}' is '{}')", path, fmt_key, fmt_name);
  const std::string digits = fmt_name.substr(prefix.size());
  int64_t format = 0;
  auto [last, err] = std::from_chars(digits.data(), digits.data() + digits.size(), format);
  if (err != std::errc() || last != digits.data() + digits.size() || format < 1 ||
      format > kCheckpointFormat)
    fail("train",
         "{}: metadata '{}' is '{}' (expected netspec-checkpoint-1 to -{}; newer than this "
         "netspec?)",
         path, fmt_key, fmt_name, kCheckpointFormat);
  s.format = static_cast<int>(format);
  const int64_t epoch = counter(meta(st, "epoch", path), "epoch", path);
  if (epoch > INT32_MAX) fail("train", "{}: metadata 'epoch' is too large (got {})", path, epoch);
  s.epoch = static_cast<int>(epoch);
  s.step = counter(meta(st, "step", path), "step", path);
  s.batch_in_epoch = counter(meta(st, "batch_in_epoch", path, "0"), "batch_in_epoch", path);
  // Every epoch and every saved mid-epoch position took at least one step.
  if (s.step < s.epoch + s.batch_in_epoch)
    fail("train", "{}: metadata 'step' {} is less than epoch {} + batch_in_epoch {}", path, s.step,
         s.epoch, s.batch_in_epoch);
  if (auto it = st.metadata.find("netspec.policy"); with_optimizer)
    s.policy = it == st.metadata.end() ? "" : it->second;  // parsed by the policy, naming path
  if (auto it = st.metadata.find("netspec.data_cursor"); with_optimizer)
    s.cursor = it == st.metadata.end() ? DataCursor{} : parse_cursor(it->second, path);
  const std::string ls = meta(st, "loss_sum", path, "0");
  char* end = nullptr;
  s.loss_sum = std::strtod(ls.c_str(), &end);
  if (ls.empty() || *end || !std::isfinite(s.loss_sum))
    fail("train", "{}: metadata 'loss_sum' is not a finite number (got '{}')", path, ls);
}

}  // namespace netspec::train
