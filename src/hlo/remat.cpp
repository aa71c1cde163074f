// Rematerialization of cheap elementwise values: a value computed in the forward pass and read
// again far later (by the backward pass) is recomputed just before that late use from operands
// that are alive there anyway, instead of being kept alive in between. Example (conv -> BN ->
// ReLU): y = x*s + t and r = max(y, 0) are recomputed from the conv output x, which the backward
// pass keeps anyway, so one tensor per layer stays alive across the step instead of four.
// Recomputing the same ops on the same operands gives the same bits (elementwise kernels are
// deterministic), and the clones sit right before their consumers, where the cpu planner fuses
// them. Only block-level ops are touched; regions keep their own uses (not cloned into).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "hlo/passes.h"

namespace netspec::hlo {
namespace {

// Ops cheap enough to recompute: elementwise arithmetic without transcendental functions, and
// the broadcasts/reshapes that feed them (free once fused).
bool cheap(const Op& op) {
  switch (op.kind) {
    case OpKind::kAdd: case OpKind::kSubtract: case OpKind::kMultiply: case OpKind::kDivide:
    case OpKind::kMaximum: case OpKind::kMinimum: case OpKind::kNegate: case OpKind::kAbs:
    case OpKind::kCompare: case OpKind::kSelect: case OpKind::kClamp: case OpKind::kConvert:
    case OpKind::kAnd: case OpKind::kOr: case OpKind::kNot:
    case OpKind::kBroadcastInDim: case OpKind::kReshape:
      break;
    default:
      return false;
  }
  if (op.results.size() != 1 || !op.regions.empty()) return false;
  for (const Value* v : op.operands)
    if (!v->type.is_tensor()) return false;
  return op.result(0)->type.is_tensor();
}

bool elementwise(const Op& op) {
  const std::string_view f = op_family(op.kind);
  return f == "unary" || f == "binary";
}

size_t bytes_of(const Value* v) {
  return v->type.is_tensor() ? static_cast<size_t>(v->type.numel()) * dtype_size(v->type.dtype()) : 0;
}

// Program position: (index of the block-level op, sub). Originals have sub 0; a clone placed
// before op `idx` gets a negative sub, the later-created ones more negative (so a clone of an
// operand, made after its user's clone, lands before it).
struct Pos {
  int idx = 0, sub = 0;
  bool operator<(const Pos& o) const { return idx != o.idx ? idx < o.idx : sub < o.sub; }
  bool operator<=(const Pos& o) const { return !(o < *this); }
};

struct Use {
  Pos pos;
  Op* user;           // the op holding the operand slot
  size_t slot;        // operand index in `user`
  bool pinned;        // inside a region or a terminator: stays with the original
  bool ride = false;  // a clone's read of a value alive there anyway: never a reason to clone it
};

class Remat {
 public:
  Remat(Block& b, const RematOptions& opt) : b_(b), opt_(opt) {}

  int run() {
    const int n = static_cast<int>(b_.ops.size());
    for (int i = 0; i < n; ++i) {
      Op* top = b_.ops[static_cast<size_t>(i)].get();
      pos_[top] = {i, 0};
      const bool term = top->kind == OpKind::kFuncReturn || top->kind == OpKind::kReturn;
      for (size_t k = 0; k < top->operands.size(); ++k)
        uses_[top->operands[k]].push_back({{i, 0}, top, k, term});
      for (const auto& r : top->regions)
        walk(*r, [&](const Op& inner) {
          for (size_t k = 0; k < inner.operands.size(); ++k)
            uses_[inner.operands[k]].push_back({{i, 0}, const_cast<Op*>(&inner), k, true});
        });
    }
    for (int i = 0; i < n; ++i) keep_shared_root(b_.ops[static_cast<size_t>(i)].get());
    // Users before operands: a clone's operands are cloned afterwards where they die early too.
    for (int i = n - 1; i >= 0; --i) visit(b_.ops[static_cast<size_t>(i)].get());
    if (clones_.empty()) return 0;
    // Splice the clones in before the ops they serve.
    std::vector<std::pair<Pos, std::unique_ptr<Op>>> all;
    for (auto& op : b_.ops) {
      Pos p = pos_[op.get()];
      all.emplace_back(p, std::move(op));
    }
    for (auto& c : clones_) all.emplace_back(c.first, std::move(c.second));
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    b_.ops.clear();
    for (auto& e : all) b_.ops.push_back(std::move(e.second));
    return static_cast<int>(clones_.size());
  }

 private:
  Pos last_use(const Value* v) const {
    auto it = uses_.find(v);
    Pos last{-1, 0};
    if (it != uses_.end())
      for (const Use& u : it->second) last = std::max(last, u.pos);
    if (auto k = kept_.find(v); k != kept_.end()) last = std::max(last, k->second);
    return last;
  }

  // v can be read at p as it is: an argument, small, alive there, or dying at most `extend` ops
  // earlier (a short extension of one value buys the recomputed value's gap of > min_gap ops).
  bool alive_at(const Value* v, Pos p) const {
    if (v->is_block_arg() || bytes_of(v) <= opt_.small_bytes) return true;
    const Pos last = last_use(v);
    return p <= last || p.idx - last.idx <= opt_.extend;
  }
  // ... or can be recomputed at p from such values (the clone's read commits v to a clone there).
  bool available(const Value* v, Pos p, int depth) const {
    if (alive_at(v, p)) return true;
    if (v->def->parent != &b_ || depth >= opt_.max_depth || !cheap(*v->def)) return false;
    for (const Value* o : v->def->operands)
      if (!available(o, p, depth + 1)) return false;
    return true;
  }

  // The uses of v in clusters separated by more than min_gap ops, in program order.
  std::vector<std::vector<Use>> clusters_of(const Value* v) const {
    auto it = uses_.find(v);
    if (it == uses_.end()) return {};
    std::vector<Use> uses = it->second;
    std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) { return a.pos < b.pos; });
    std::vector<std::vector<Use>> clusters(1);
    for (size_t k = 0; k < uses.size(); ++k) {
      if (k > 0 && uses[k].pos.idx - uses[k - 1].pos.idx > opt_.min_gap) clusters.emplace_back();
      clusters.back().push_back(uses[k]);
    }
    return clusters;
  }

  // A later cluster a clone can serve: elementwise readers only, not all of them rides.
  static bool cloneable(const std::vector<Use>& cl) {
    return std::none_of(cl.begin(), cl.end(),
                        [](const Use& u) { return u.pinned || !elementwise(*u.user); }) &&
           !std::all_of(cl.begin(), cl.end(), [](const Use& u) { return u.ride; });
  }

  // A value t read late by nobody, that several cheap values read late are computed from (GELU's
  // x/√2 and x/2 from its pre-activation x, both read by the backward): t is kept alive to their
  // last late cluster when that frees more bytes than it holds, so visit() recomputes them there
  // instead of keeping each alive (one tensor kept instead of two).
  void keep_shared_root(const Op* top) {
    if (top->results.size() != 1) return;
    const Value* t = top->result(0);
    if (bytes_of(t) <= opt_.small_bytes) return;
    const std::vector<std::vector<Use>> t_uses = clusters_of(t);
    if (t_uses.size() != 1) return;
    size_t freed = 0;
    Pos until{-1, 0};
    std::vector<const Op*> seen;  // a reader of t in two operand slots counts once
    for (const Use& u : t_uses[0]) {
      const Op* v = u.user;
      if (u.pinned || std::count(seen.begin(), seen.end(), v)) continue;
      seen.push_back(v);
      if (!cheap(*v) || bytes_of(v->result(0)) < opt_.min_bytes) continue;
      const std::vector<std::vector<Use>> cl = clusters_of(v->result(0));
      if (cl.size() < 2) continue;
      bool ok = true;
      for (size_t c = 1; c < cl.size() && ok; ++c) {
        ok = cloneable(cl[c]);
        for (const Value* o : v->operands)
          ok = ok && (o == t || available(o, cl[c].front().pos, 0));
      }
      if (!ok) continue;
      freed += bytes_of(v->result(0));
      until = std::max(until, cl.back().front().pos);
    }
    if (freed > bytes_of(t)) kept_[t] = until;
  }

  void visit(Op* op) {
    if (!cheap(*op) || bytes_of(op->result(0)) < opt_.min_bytes) return;
    Value* v = op->result(0);
    std::vector<std::vector<Use>> clusters = clusters_of(v);
    if (clusters.empty()) return;
    // All or nothing: v is recomputed only when every later cluster can be (otherwise it stays
    // alive to its last use anyway and a clone would only add work). A cluster made only of
    // rides keeps v: v is alive there by itself (a residual stream read by each block's clone),
    // and cloning it would recompute the whole chain behind it at every block.
    // Only into elementwise readers, where the planner fuses the clone (recomputing a value
    // for a convolution or dot would write it out again: a whole extra pass).
    if (clusters.size() < 2) return;
    for (size_t c = 1; c < clusters.size(); ++c) {
      const std::vector<Use>& cl = clusters[c];
      if (!cloneable(cl)) return;
      for (const Value* o : op->operands)
        if (!available(o, cl.front().pos, 0)) return;
    }
    for (size_t c = 1; c < clusters.size(); ++c) {
      Value* copy = clone_before(*op, clusters[c].front().pos);
      for (const Use& u : clusters[c]) {
        u.user->operands[u.slot] = copy;
        uses_[copy].push_back(u);
      }
    }
    uses_[v] = clusters[0];
  }

  Value* clone_before(const Op& op, Pos at) {
    auto c = std::make_unique<Op>(op.kind);
    c->operands = op.operands;
    c->attrs = op.attrs;
    c->loc = op.loc;
    c->parent = &b_;
    auto r = std::make_unique<Value>();
    r->type = op.result(0)->type;
    r->def = c.get();
    c->results.push_back(std::move(r));
    const Pos p{at.idx, --next_sub_};
    pos_[c.get()] = p;
    for (size_t k = 0; k < c->operands.size(); ++k)
      uses_[c->operands[k]].push_back({p, c.get(), k, false, alive_at(c->operands[k], at)});
    Value* out = c->result(0);
    clones_.emplace_back(p, std::move(c));
    return out;
  }

  Block& b_;
  const RematOptions& opt_;
  std::unordered_map<const Op*, Pos> pos_;
  std::unordered_map<const Value*, std::vector<Use>> uses_;
  std::unordered_map<const Value*, Pos> kept_;  // keep_shared_root: alive up to there
  std::vector<std::pair<Pos, std::unique_ptr<Op>>> clones_;
  int next_sub_ = 0;
};

}  // namespace

int rematerialize(Block& b, const RematOptions& opt) { return Remat(b, opt).run(); }

}  // namespace netspec::hlo
