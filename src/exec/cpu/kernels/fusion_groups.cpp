// Fusion groups for the cpu executor (kernels.h FusionPlan): which elementwise ops run together
// as one fused kernel (fusion.cpp). Greedy, in program order: an op joins the most recent
// unsealed group that produced one of its operands with the same domain size; a group is sealed
// as soon as an op outside it reads one of its values (the group runs at its last member's
// position, so nothing may join after an outside reader). Groups of one op keep the ordinary
// kernels, but for an op whose only reader is a sum (the planner folds the sum into it).
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "exec/cpu/kernels.h"
#include "exec/cpu/kernels/fusion_program.h"

namespace netspec::exec::cpu {

namespace {

using namespace fused;
using hlo::OpKind;
using hlo::Value;

// Candidate groups before pruning: each with its domain size and whether an outside reader has
// sealed it; group_of maps non-broadcast member results to their group.
struct Candidate {
  FusedGroup g;
  int64_t n = 0;
  bool sealed = false;
  std::unordered_map<const hlo::Op*, bool> members;
};
struct Grouping {
  std::vector<Candidate> groups;
  std::unordered_map<const Value*, int> group_of;             // non-broadcast member results
  std::unordered_map<const Value*, const hlo::Op*> bcast_of;  // fusable broadcasts (absorbed)
};

// The greedy grouping pass (see the file comment), members in program order.
Grouping greedy_groups(const hlo::Block& body) {
  Grouping gr;
  auto& groups = gr.groups;
  auto& group_of = gr.group_of;
  auto& bcast_of = gr.bcast_of;
  auto seal_reader = [&](const Value* v, int except) {
    auto it = group_of.find(v);
    if (it != group_of.end() && it->second != except)
      groups[static_cast<size_t>(it->second)].sealed = true;
  };
  for (const auto& up : body.ops) {
    const hlo::Op& op = *up;
    const bool member = fusable(op);
    int join = -1;
    if (member && op.kind == OpKind::kBroadcastInDim) {
      seal_reader(op.operand(0), -1);
      bcast_of[op.result(0)] = &op;
      continue;
    }
    if (member) {
      const int64_t n = op.result(0)->type.numel();
      std::vector<int> cands;
      for (auto* v : op.operands) {
        auto it = group_of.find(v);
        if (it == group_of.end()) continue;
        const Candidate& g = groups[static_cast<size_t>(it->second)];
        if (!g.sealed && g.n == n) cands.push_back(it->second);
      }
      if (!cands.empty()) join = *std::max_element(cands.begin(), cands.end());
      // Reading two open groups of the same domain merges them (neither has an outside reader
      // yet, so both may run together at this op). Members are re-sorted by position below.
      for (int other : cands) {
        if (other == join) continue;
        Candidate& from = groups[static_cast<size_t>(other)];
        if (from.g.ops.empty()) continue;
        Candidate& to = groups[static_cast<size_t>(join)];
        for (const hlo::Op* m : from.g.ops) {
          if (to.members.count(m)) continue;
          to.members[m] = true;
          to.g.ops.push_back(m);
          if (m->kind != OpKind::kBroadcastInDim) group_of[m->result(0)] = join;
        }
        from.g.ops.clear();
        from.members.clear();
      }
      if (join < 0) {
        join = static_cast<int>(groups.size());
        groups.push_back({});
        groups.back().n = n;
      }
      Candidate& g = groups[static_cast<size_t>(join)];
      // Broadcasts read by this op are recomputed inside the group (before their first reader).
      for (auto* v : op.operands) {
        auto b = bcast_of.find(v);
        if (b == bcast_of.end() || g.members.count(b->second)) continue;
        g.members[b->second] = true;
        g.g.ops.push_back(b->second);
      }
    }
    for (auto* v : op.operands) seal_reader(v, join);
    for (const auto& r : op.regions)
      hlo::walk(*r, [&](const hlo::Op& inner) {
        for (auto* v : inner.operands) seal_reader(v, -1);
      });
    if (join >= 0) {
      Candidate& g = groups[static_cast<size_t>(join)];
      g.g.ops.push_back(&op);
      g.members[&op] = true;
      group_of[op.result(0)] = join;
    }
  }
  // Program order is a topological order: merged groups are put back into it.
  std::unordered_map<const hlo::Op*, size_t> pos;
  for (size_t i = 0; i < body.ops.size(); ++i) pos[body.ops[i].get()] = i;
  for (Candidate& g : groups)
    std::sort(g.g.ops.begin(), g.g.ops.end(), [&](const hlo::Op* a, const hlo::Op* b) {
      // A broadcast is placed right before its first reader in the group (it sits earlier in
      // program order anyway, so position order is valid for it too).
      return pos[a] < pos[b];
    });
  return gr;
}

}  // namespace

FusionPlan find_fusion_groups(const hlo::Block& body) {
  Grouping gr = greedy_groups(body);
  auto& groups = gr.groups;
  auto& group_of = gr.group_of;
  auto& bcast_of = gr.bcast_of;
  // Keep groups of two or more ops; a broadcast counts (it is not materialised any more). A lone
  // op whose only reader is a sum is kept too: the planner may fold the sum into its step, which
  // then never writes the op's result (resnet50's g·x for the second BN reading one gradient:
  // 1.9 + 0.9 ms -> 1.1 ms at 16x256x56x56 on the Zen 5).
  std::unordered_map<const Value*, int> readers;
  std::unordered_map<const Value*, const hlo::Op*> reader_of;
  for (const auto& up : body.ops) {
    for (auto* v : up->operands) {
      ++readers[v];
      reader_of[v] = up.get();
    }
    for (const auto& r : up->regions)
      hlo::walk(*r, [&](const hlo::Op& inner) {
        for (auto* v : inner.operands) readers[v] += 2;  // never "only reader"
      });
  }
  auto summed_alone = [&](const FusedGroup& g) {
    if (g.ops.size() != 1 || g.ops[0]->kind == OpKind::kBroadcastInDim) return false;
    const Value* v = g.ops[0]->result(0);
    if (readers[v] != 1) return false;
    const hlo::Op* r = reader_of[v];
    return r->kind == OpKind::kReduce && r->operands.size() == 2 && r->operand(0) == v;
  };
  std::vector<int> kept_index(groups.size(), -1);
  FusionPlan plan;
  for (size_t gi = 0; gi < groups.size(); ++gi)
    if (groups[gi].g.ops.size() >= 2 || summed_alone(groups[gi].g)) {
      kept_index[gi] = static_cast<int>(plan.groups.size());
      plan.groups.push_back({});
    }
  // Readers outside each group make outputs; broadcasts read by any op that is not in a kept
  // group containing them still run as their own step.
  std::unordered_map<const Value*, bool> used_outside;
  std::unordered_map<const hlo::Op*, bool> bcast_standalone;
  auto note_read = [&](const Value* v, const hlo::Op* reader, bool in_region) {
    auto b = bcast_of.find(v);
    if (b != bcast_of.end()) {
      bool absorbed = false;
      if (!in_region && reader && reader->results.size() == 1) {
        auto it = group_of.find(reader->result(0));
        if (it != group_of.end() && kept_index[static_cast<size_t>(it->second)] >= 0 &&
            groups[static_cast<size_t>(it->second)].members.count(reader))
          absorbed = groups[static_cast<size_t>(it->second)].members.count(b->second) > 0;
      }
      if (!absorbed) bcast_standalone[b->second] = true;
      return;
    }
    auto it = group_of.find(v);
    if (it == group_of.end()) return;
    int mine = -1;
    if (!in_region && reader && !reader->results.empty()) {
      auto r = group_of.find(reader->result(0));
      if (r != group_of.end() && groups[static_cast<size_t>(r->second)].members.count(reader))
        mine = r->second;
    }
    if (mine != it->second) used_outside[v] = true;
  };
  for (const auto& up : body.ops) {
    const hlo::Op& op = *up;
    bool is_bcast = bcast_of.count(op.results.empty() ? nullptr : op.result(0)) > 0;
    for (auto* v : op.operands) note_read(v, is_bcast ? nullptr : &op, false);
    for (const auto& r : op.regions)
      hlo::walk(*r, [&](const hlo::Op& inner) {
        for (auto* v : inner.operands) note_read(v, nullptr, true);
      });
  }
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    if (kept_index[gi] < 0) continue;
    FusedGroup& g = plan.groups[static_cast<size_t>(kept_index[gi])];
    g.ops = std::move(groups[gi].g.ops);
    std::unordered_map<const Value*, bool> seen;
    for (const hlo::Op* op : g.ops) {
      for (auto* v : op->operands) {
        bool member = (bcast_of.count(v) && groups[gi].members.count(bcast_of[v])) ||
                      (group_of.count(v) && group_of[v] == static_cast<int>(gi));
        if (!member && !seen[v]) {
          seen[v] = true;
          g.ins.push_back(v);
        }
      }
      if (op->kind != OpKind::kBroadcastInDim && used_outside.count(op->result(0)))
        g.outs.push_back(op->result(0));
    }
    // A group whose values nobody reads still runs (dead code is the cleanup passes' job); it
    // needs at least one output for the planner, so its last op's value is one.
    if (g.outs.empty()) g.outs.push_back(g.ops.back()->result(0));
    for (const hlo::Op* op : g.ops)
      if (op->kind != OpKind::kBroadcastInDim) plan.member_of[op] = kept_index[gi];
    plan.last_op_of.push_back(g.ops.back());
  }
  for (const auto& [v, op] : bcast_of)
    if (!bcast_standalone.count(op)) {
      // Absorbed by every reader: only skip it when some kept group holds it.
      bool held = false;
      for (size_t gi = 0; gi < groups.size(); ++gi)
        if (kept_index[gi] >= 0 && groups[gi].members.count(op)) held = true;
      if (held) plan.skip_bcast[op] = true;
    }
  return plan;
}

}  // namespace netspec::exec::cpu
