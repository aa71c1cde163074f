// Sync-BN: with R data-parallel replicas each holding a shard of n elements per channel, the
// global statistics are μ = Σ_r s_r / (R·n) and σ² = Σ_r Σ (x - μ)² / (R·n), the sums made
// global by all_reduce (whose VJP, an all_reduce of the cotangents, carries the backward).
#include "layers/lower.h"

namespace netspec::layers {

Value* bn_replica_sum(LowerCtx& c, Value* partial_sum) {
  if (c.bn_sync_replicas <= 1) return partial_sum;
  return c.b.all_reduce({partial_sum}, {}, hlo::OpKind::kAdd).at(0);
}

int64_t bn_replica_count(const LowerCtx& c, int64_t local_count) {
  return local_count * std::max<int64_t>(1, c.bn_sync_replicas);
}

}  // namespace netspec::layers
