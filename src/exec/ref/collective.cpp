// Reference kernel: all_reduce. Every replica hands its operands to ReplicaComm::exchange and
// folds, element by element, the contributions of the replicas in its group (in group order)
// with the computation region. A replica in no listed group, or a single replica, keeps its own.
// A sum over one group of all replicas uses the communicator's native sum when it has one (Gloo).
#include "exec/ref/kernel_util.h"
#include "hlo/op_family.h"

namespace netspec::exec::ref {
namespace {

// replica_groups: Nx M i64 (dense, -1 padded) or absent/empty = one group of all replicas.
std::vector<I64s> replica_groups(const hlo::Op& op, int n) {
  std::vector<I64s> groups;
  if (auto* d = op.attrs.get_if<hlo::DenseAttr>("replica_groups")) {
    const Tensor& t = d->value;
    if (t.rank() == 2) {
      for (int64_t i = 0; i < t.shape()[0]; ++i) {
        I64s g;
        for (int64_t j = 0; j < t.shape()[1]; ++j) {
          int64_t v = t.as_int64(i * t.shape()[1] + j);
          if (v >= 0) g.push_back(v);
        }
        if (!g.empty()) groups.push_back(g);
      }
    }
  }
  if (groups.empty()) {
    I64s all;
    for (int i = 0; i < n; ++i) all.push_back(i);
    groups.push_back(all);
  }
  for (const auto& g : groups)
    for (int64_t r : g)
      if (r >= n) fail("all_reduce", "replica group names replica {} (only {} replicas run)", r, n);
  return groups;
}

std::vector<Tensor> eval_all_reduce(const hlo::Op& op, const std::vector<Tensor>& in,
                                    RunContext& ctx) {
  if (!ctx.comm) return in;  // one replica: the group is {self}
  int n = ctx.comm->num_replicas();
  std::vector<I64s> groups = replica_groups(op, n);
  ScalarRegion body(*op.region(0), ctx);
  if (groups.size() == 1 && static_cast<int>(groups[0].size()) == n &&
      body.fast_kind() == hlo::OpKind::kAdd) {
    if (auto sums = ctx.comm->sum_all(ctx.replica_id, in)) return *sums;
  }
  std::vector<std::vector<Tensor>> all = ctx.comm->exchange(ctx.replica_id, in);
  const I64s* mine = nullptr;
  for (const auto& g : groups)
    for (int64_t r : g)
      if (r == ctx.replica_id) mine = &g;
  if (!mine) return in;
  std::vector<Tensor> outs;
  for (size_t k = 0; k < in.size(); ++k) {
    Tensor acc = all[static_cast<size_t>((*mine)[0])][k].clone();
    for (size_t j = 1; j < mine->size(); ++j) {
      const Tensor& x = all[static_cast<size_t>((*mine)[j])][k];
      if (x.shape() != acc.shape() || x.dtype() != acc.dtype())
        fail("all_reduce", "replicas disagree on operand {} (got {} and {})", k, x.type_str(),
             acc.type_str());
      for (int64_t i = 0; i < acc.numel(); ++i) {
        if (body.fast()) {
          body.apply_fast(acc, i, x, i, acc, i);
        } else {
          std::vector<Tensor> r = body({scalar_at(acc, i), scalar_at(x, i)});
          copy_elem(acc, i, r.at(0), 0);
        }
      }
    }
    outs.push_back(acc);
  }
  return outs;
}

}  // namespace

void register_collective_kernels(Kernel* t) {
  hlo::FamilyTable<Kernel> ft(t, "collective.cpp", {"collective"});
  ft.set(hlo::OpKind::kAllReduce, eval_all_reduce);
}

}  // namespace netspec::exec::ref
