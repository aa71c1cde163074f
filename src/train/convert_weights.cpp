// State dict -> netspec names (see convert_weights.h).
#include "train/convert_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "core/error.h"

namespace netspec::train {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// torchvision's GoogLeNet/Inception build auxiliary classifiers used only in training.
constexpr const char* kAuxPrefixes[] = {"aux1.", "aux2.", "AuxLogits."};
constexpr const char* kMean = ".running_mean";
constexpr const char* kVar = ".running_var";

std::string shape_text(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// "10" after "9": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ie, j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// Module nesting a parameter name may have (PyTorch's deepest real names have ~15 segments);
// the Aligner recurses once per level, so a name of 10^6 dots must be refused, not followed.
constexpr int kMaxNameDepth = 256;

// The file's parameter names as a module tree: a node's items are its own tensors (leaves) and
// its submodules, in the order they first appear in the file.
struct Tree {
  struct Item {
    bool leaf;
    int ref;  // leaf: index into the file's parameters; else a node index
    std::string key;
  };
  struct Node {
    std::vector<Item> items;
    int size = 0;  // leaves below
  };
  std::vector<Node> nodes{Node{}};

  Tree(const std::vector<std::string>& names, const std::string& where) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (std::count(names[i].begin(), names[i].end(), '.') >= kMaxNameDepth)
        fail("convert", "{}: parameter name '{}...' nests {} modules deep (expected at most {})",
             where, names[i].substr(0, 60), std::count(names[i].begin(), names[i].end(), '.'),
             kMaxNameDepth - 1);
      int n = 0;
      size_t a = 0;
      for (size_t dot; (dot = names[i].find('.', a)) != std::string::npos; a = dot + 1) {
        const std::string seg = names[i].substr(a, dot - a);
        int child = -1;
        for (const Item& it : nodes[n].items)
          if (!it.leaf && it.key == seg) child = it.ref;
        if (child < 0) {
          child = static_cast<int>(nodes.size());
          nodes[n].items.push_back({false, child, seg});
          nodes.emplace_back();
        }
        n = child;
      }
      nodes[n].items.push_back({true, static_cast<int>(i), names[i].substr(a)});
    }
    // Leaves below each node, without recursion: a child's index is always above its parent's.
    for (size_t n = nodes.size(); n-- > 0;) {
      int s = 0;
      for (const Item& it : nodes[n].items) s += it.leaf ? 1 : nodes[it.ref].size;
      nodes[n].size = s;
    }
  }
  // PyTorch's state_dict order where names are all that is left: a module's own tensors first
  // (weight, bias, then by name), then its submodules in natural name order.
  void sort_by_name() {
    auto rank = [](const Item& it) {
      return !it.leaf ? 3 : it.key == "weight" ? 0 : it.key == "bias" ? 1 : 2;
    };
    for (Node& nd : nodes)
      std::stable_sort(nd.items.begin(), nd.items.end(), [&](const Item& x, const Item& y) {
        if (rank(x) != rank(y)) return rank(x) < rank(y);
        return natural_less(x.key, y.key);
      });
  }
};

bool fits(const Shape& file, const Shape& net, bool loose) {
  return file == net || (loose && file.size() == net.size());
}

// Orders the tree's leaves so the k-th has the k-th netspec shape; subtrees stay contiguous.
class Aligner {
 public:
  // loose[k]: position k takes any shape of its rank (a head of another class count).
  Aligner(const Tree& tree, const std::vector<Shape>& file, const std::vector<Shape>& net,
          const std::vector<std::string>& net_names, const std::vector<bool>& loose)
      : tree_(tree), file_(file), net_(net), loose_(loose) {
    for (const std::string& n : net_names) {
      std::set<std::string> segs;
      for (size_t a = 0, dot = 0; dot != std::string::npos; a = dot + 1) {
        dot = n.find('.', a);
        segs.insert(n.substr(a, dot == std::string::npos ? std::string::npos : dot - a));
      }
      segments_.push_back(std::move(segs));
    }
  }

  std::optional<std::vector<int>> run() { return match(0, 0); }
  bool over_budget() const { return steps_ > kBudget; }
  // The furthest netspec position any arrangement reached, and the file leaves tried there.
  int frontier() const { return frontier_; }
  const std::vector<int>& tried() const { return tried_; }

 private:
  static constexpr int64_t kBudget = 2'000'000;
  const Tree& tree_;
  const std::vector<Shape>& file_;
  const std::vector<Shape>& net_;
  const std::vector<bool>& loose_;
  std::vector<std::set<std::string>> segments_;  // of each netspec name, split at '.'
  std::map<std::pair<int, int>, std::optional<std::vector<int>>> memo_;
  int64_t steps_ = 0;
  int frontier_ = -1;
  std::vector<int> tried_;

  std::optional<std::vector<int>> match(int node, int pos) {
    auto key = std::make_pair(node, pos);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    std::optional<std::vector<int>> r;
    const Tree::Node& nd = tree_.nodes[node];
    if (pos + nd.size <= static_cast<int>(net_.size())) {
      std::vector<char> used(nd.items.size(), 0);
      std::vector<int> out;
      std::set<std::string> dead;
      if (place(nd, used, pos, out, dead)) r = std::move(out);
    }
    return memo_[key] = r;
  }

  // Depth-first over the orders of nd's items; `dead` holds item sets that cannot be completed.
  bool place(const Tree::Node& nd, std::vector<char>& used, int pos, std::vector<int>& out,
             std::set<std::string>& dead) {
    const std::string state(used.begin(), used.end());
    if (std::find(used.begin(), used.end(), 0) == used.end()) return true;
    if (dead.count(state)) return false;
    // Items whose name is a segment of the netspec name at `pos` first (conv1 for
    // layers.2.block0.conv1.weight): it settles siblings of equal shapes (bn1, bn2; norm1, norm2).
    // Not indices: torch's features.4 need not be netspec's layers.4.
    std::vector<size_t> cand;
    for (int pass = 0; pass < 2; ++pass)
      for (size_t c = 0; c < nd.items.size(); ++c) {
        const std::string& key = nd.items[c].key;
        const bool named =
            !std::all_of(key.begin(), key.end(), ::isdigit) && segments_[pos].count(key) > 0;
        if (named == (pass == 0)) cand.push_back(c);
      }
    for (size_t c : cand) {
      if (used[c] || ++steps_ > kBudget) continue;
      const Tree::Item& it = nd.items[c];
      const size_t before = out.size();
      int size = 1;
      if (it.leaf) {
        if (!fits(file_[it.ref], net_[pos], loose_[pos])) {
          if (pos > frontier_) frontier_ = pos, tried_.clear();
          if (pos == frontier_ && tried_.size() < 4 &&
              std::find(tried_.begin(), tried_.end(), it.ref) == tried_.end())
            tried_.push_back(it.ref);
          continue;
        }
        out.push_back(it.ref);
      } else {
        auto sub = match(it.ref, pos);
        if (!sub) continue;
        out.insert(out.end(), sub->begin(), sub->end());
        size = tree_.nodes[it.ref].size;
      }
      used[c] = 1;
      if (place(nd, used, pos + size, out, dead)) return true;
      used[c] = 0;
      out.resize(before);
    }
    dead.insert(state);
    return false;
  }
};

struct Split {
  std::vector<std::pair<std::string, const Tensor*>> params;
  std::map<std::string, const Tensor*> stats;
};

}  // namespace

ConvertedWeights convert_state_dict(const TorchTensors& in, const ParamTable& t,
                                    const std::string& where, bool head_may_differ) {
  ConvertedWeights cw;
  Split sp;
  for (const auto& [name, x] : in.tensors) {
    bool aux = false;
    for (const char* p : kAuxPrefixes) aux = aux || name.rfind(p, 0) == 0;
    if (ends_with(name, ".num_batches_tracked"))
      ++cw.batches_tracked;
    else if (aux || !is_float(x.dtype()))  // integer buffers (index tables) hold no weights
      cw.unused.push_back(name);
    else if (ends_with(name, kMean) || ends_with(name, kVar))
      sp.stats[name] = &x;
    else
      sp.params.emplace_back(name, &x);
  }
  const size_t n = t.params.size();
  std::vector<Shape> file_shapes, net_shapes;
  std::vector<std::string> names;
  for (const auto& [name, x] : sp.params) file_shapes.push_back(x->shape()), names.push_back(name);
  for (const auto& p : t.params) net_shapes.push_back(p.shape);
  int head = -1;
  for (const auto& p : t.params) head = std::max(head, p.layer);
  std::vector<bool> loose;
  for (const auto& p : t.params) loose.push_back(head_may_differ && p.layer == head);

  // The tool's rule first: the k-th file parameter to the k-th netspec parameter.
  std::string first_diff;
  for (size_t k = 0; k < std::min(n, sp.params.size()) && first_diff.empty(); ++k)
    if (!fits(file_shapes[k], net_shapes[k], loose[k])) {
      first_diff =
          fmt::format("'{}' -> {}: shape (got {}, expected {})", names[k], t.params[k].name,
                      shape_text(file_shapes[k]), shape_text(net_shapes[k]));
      if (t.params[k].layer == head && file_shapes[k].size() == net_shapes[k].size() &&
          !file_shapes[k].empty())
        first_diff += fmt::format(
            "; this is the head: convert with --classes {} (the file's), then `train "
            "--init-from OUT --classes N` re-initialises it",
            file_shapes[k][0]);
    }
  if (sp.params.size() != n)
    fail("convert",
         "{}: parameter count (got {} tensors in the file, expected {} netspec params){}", where,
         sp.params.size(), n,
         first_diff.empty() ? "" : "; first difference in order: " + first_diff);
  std::vector<int> order(n);
  for (size_t k = 0; k < n; ++k) order[k] = static_cast<int>(k);
  if (!first_diff.empty() || in.library_order) {
    Tree tree(names, where);
    if (in.library_order) tree.sort_by_name();
    std::vector<std::string> net_names;
    for (const auto& p : t.params) net_names.push_back(p.name);
    Aligner al(tree, file_shapes, net_shapes, net_names, loose);
    auto placed = al.run();
    if (!placed && (!in.library_order || al.frontier() < 0))
      fail("convert", "{}: the file's tensors do not fit the net{}: {}", where,
           al.over_budget() ? " (search budget exhausted)" : "",
           first_diff.empty() ? "no order of its modules gives the net's shapes" : first_diff);
    if (!placed) {  // library order: file order says nothing, so say how far names got
      const ParamDesc& p = t.params[al.frontier()];
      std::vector<std::string> tried;
      std::string hint;
      for (int i : al.tried()) {
        tried.push_back(fmt::format("'{}' {}", names[i], shape_text(file_shapes[i])));
        if (p.layer == head && hint.empty() && file_shapes[i].size() == p.shape.size() &&
            !p.shape.empty())
          hint = fmt::format("; this is the head: convert with --classes {} (the file's)",
                             file_shapes[i][0]);
      }
      fail("convert",
           "{}: no arrangement of the file's modules gives the net's shapes; the furthest reaches "
           "netspec's {} {} (tensor {} of {}; tried {}){}",
           where, p.name, shape_text(p.shape), al.frontier() + 1, n, fmt::join(tried, ", "), hint);
    }
    order = *placed;
  }
  bool moved = false;
  std::map<std::string, std::string> file_of;  // netspec param name -> file name
  for (size_t k = 0; k < n; ++k) {
    const auto& [name, x] = sp.params[order[k]];
    moved = moved || order[k] != static_cast<int>(k);
    cw.st.tensors.emplace_back(t.params[k].name, to_f32(*x, where + ": " + name));
    cw.mapping.emplace_back(t.params[k].name, name);
    file_of[t.params[k].name] = name;
  }
  cw.reordered = moved;
  // Running statistics: those of the module whose .weight became the BN's gamma.
  std::set<std::string> used;
  for (size_t k = 0; k < t.bns.size(); ++k) {
    const BnDesc& bn = t.bns[k];
    auto g = file_of.find(bn.name + ".weight");
    if (g == file_of.end())
      fail("convert", "{}: BN {} {} has no .weight parameter", where, k, bn.name);
    const std::string& gamma = g->second;
    if (!ends_with(gamma, ".weight"))
      fail("convert", "{}: BN {} {}: its gamma came from '{}', not a module's .weight", where, k,
           bn.name, gamma);
    const std::string module = gamma.substr(0, gamma.size() - 7);
    for (const char* suffix : {kMean, kVar}) {
      const std::string key = module + suffix;
      auto it = sp.stats.find(key);
      if (it == sp.stats.end())
        fail("convert", "{}: BN {} {}: the file has no '{}' (its gamma is '{}')", where, k, bn.name,
             key, gamma);
      if (it->second->shape() != Shape{bn.channels})
        fail("convert", "{}: '{}' -> {}{}: shape (got {}, expected [{}])", where, key, bn.name,
             suffix, shape_text(it->second->shape()), bn.channels);
      cw.st.tensors.emplace_back(bn.name + suffix, to_f32(*it->second, where + ": " + key));
      cw.mapping.emplace_back(bn.name + suffix, key);
      used.insert(key);
    }
  }
  std::vector<std::string> orphans;
  for (const auto& [name, x] : sp.stats)
    if (!used.count(name)) orphans.push_back(name);
  if (!orphans.empty())
    fail("convert", "{}: running statistics that belong to no netspec BN (got {}: {})", where,
         orphans.size(), fmt::join(orphans, ", "));
  return cw;
}

}  // namespace netspec::train
