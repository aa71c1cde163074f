// Loading initial weights by name (see init_from.h).
#include "train/init_from.h"

#include <fmt/format.h>

#include <ostream>
#include <set>

#include "core/error.h"
#include "core/safetensors.h"
#include "core/torch_pickle.h"
#include "core/zip_reader.h"
#include "optim/optimizer.h"
#include "train/convert_weights.h"

namespace netspec::train {
namespace {

// "floats:N" (the seed's bootstrapBackbone prefixFloats): the first layers whose parameters, in
// table order, are exactly the first N floats.
std::set<int> prefix_layers(const std::string& r, const ParamTable& t) {
  int64_t want = -1;
  try {
    size_t used = 0;
    want = std::stoll(r.substr(7), &used);
    if (used != r.size() - 7 || want < 1) throw std::invalid_argument("n");
  } catch (const std::logic_error&) {
    fail("train", "bootstrapRanges '{}': expected floats:N with N >= 1", r);
  }
  std::set<int> out;
  int64_t sum = 0, before = 0;
  for (const auto& p : t.params) {
    if (!out.count(p.layer)) {  // a layer boundary
      if (sum >= want) break;
      before = sum;
    }
    out.insert(p.layer);
    sum += p.numel();
  }
  if (sum != want)
    fail("train",
         "bootstrapRanges '{}': the first {} floats do not end at a layer boundary (the nearest "
         "boundaries are {} and {} floats; the net has {})",
         r, want, before, sum, t.total_params());
  return out;
}

std::set<int> parse_ranges(const std::string& r, const ParamTable& t) {
  if (r.rfind("floats:", 0) == 0) return prefix_layers(r, t);
  std::set<int> out;
  size_t a = 0;
  while (a < r.size()) {
    size_t e = r.find(',', a);
    if (e == std::string::npos) e = r.size();
    const std::string item = r.substr(a, e - a);
    try {
      size_t used = 0, dash = item.find('-', 1);
      int lo = std::stoi(item, &used), hi = lo;
      if (dash != std::string::npos) hi = std::stoi(item.substr(dash + 1), &used);
      if (lo < 0 || hi < lo) throw std::invalid_argument("order");
      for (int i = lo; i <= hi; ++i) out.insert(i);
    } catch (const std::logic_error&) {
      fail("train", "bootstrapRanges '{}': item '{}' is not an index or a-b range", r, item);
    }
    a = e + 1;
  }
  return out;
}

// netspec names as they are; PyTorch names (a torch.save zip, or a safetensors file holding none
// of the net's names) through `netspec convert`'s mapping, the head free to differ.
SafeTensors read_init_file(const std::string& path, const ParamTable& t, std::ostream* log) {
  SafeTensors st;
  if (!ZipReader::is_zip(path)) {
    st = read_safetensors(path);
    for (const auto& p : t.params)
      for (const auto& [n, x] : st.tensors)
        if (n == p.name) return st;
  }
  TorchTensors in = read_weight_file(path);
  if (log) *log << fmt::format("{}: PyTorch names, converted as `netspec convert` does\n", path);
  return convert_state_dict(in, t, path, true).st;
}

}  // namespace

void load_init_weights(const std::string& path, const ParamTable& t, TrainState& s,
                       const std::string& ranges, std::ostream* log) {
  SafeTensors st = read_init_file(path, t, log);
  std::map<std::string, const Tensor*> by_name;
  for (const auto& [n, x] : st.tensors) by_name[n] = &x;
  const std::set<int> layers = parse_ranges(ranges, t);
  int head = -1;
  for (const auto& p : t.params) head = std::max(head, p.layer);
  int loaded = 0;
  std::vector<std::string> reinit;
  std::set<std::string> used;
  // One tensor: loaded when present with the same shape; the head's may differ or be absent.
  auto take = [&](const std::string& name, int layer, Tensor& dst) {
    if (!layers.empty() && !layers.count(layer)) return;
    auto it = by_name.find(name);
    const bool same = it != by_name.end() && it->second->shape() == dst.shape() &&
                      it->second->dtype() == dst.dtype();
    if (same) {
      dst = it->second->clone();
      used.insert(name);
      ++loaded;
    } else if (layer == head) {
      reinit.push_back(it == by_name.end()
                           ? name + " (absent)"
                           : fmt::format("{} ({} in the file)", name, it->second->type_str()));
    } else if (it == by_name.end()) {
      fail("train", "{}: has no tensor '{}' (layer {}; the file holds {} tensors)", path, name,
           layer, st.tensors.size());
    } else {
      fail("train", "{}: tensor '{}' does not match the net (got {}, expected {})", path, name,
           it->second->type_str(), dst.type_str());
    }
  };
  for (size_t i = 0; i < s.params.size(); ++i)
    take(t.params[i].name, t.params[i].layer, s.params[i]);
  for (size_t i = 0; i < s.running.size(); ++i) {
    const std::string& n = s.running_names[i];
    int layer = -1;
    for (const auto& bn : t.bns)
      if (n.rfind(bn.name + ".", 0) == 0) layer = bn.layer;
    take(n, layer, s.running[i]);
  }
  if (log) {
    *log << fmt::format("init from {}: {} tensors loaded", path, loaded);
    if (!reinit.empty()) *log << fmt::format(", head re-initialised: {}", fmt::join(reinit, ", "));
    const size_t unused = st.tensors.size() - used.size();
    if (unused > 0) *log << fmt::format(", {} tensors of the file unused", unused);
    *log << "\n";
  }
}

void check_freeze(const TrainConfig& c, const ParamTable& t) {
  for (const std::string& pre : optim::freeze_prefixes(c.freeze)) {
    bool any = false;
    for (const auto& p : t.params) any = any || p.name.rfind(pre, 0) == 0;
    if (!any) {
      std::vector<std::string> ex;
      for (size_t i = 0; i < t.params.size() && ex.size() < 4; i += 1 + t.params.size() / 4)
        ex.push_back(t.params[i].name);
      fail("train", "freeze prefix '{}' matches no parameter (names look like {})", pre,
           fmt::join(ex, ", "));
    }
  }
}

}  // namespace netspec::train
