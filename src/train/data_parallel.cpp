// Data-parallel replicas of the train step (see data_parallel.h).
#include "train/data_parallel.h"

#include <cstring>

#include "core/error.h"

namespace netspec::train {

// Rank 0's tensors on every rank: an all_reduce sum to which the other ranks add zeros.
std::vector<Tensor> from_rank0(std::vector<Tensor> ts, const DataParallel& dp) {
  if (dp.rank != 0)
    for (auto& t : ts) {
      t = t.clone();
      std::memset(t.raw(), 0, t.nbytes());
    }
  auto sums = dp.comm->sum_all(dp.rank, ts);
  if (!sums) fail("train", "the process group's communicator has no sum all_reduce");
  return *sums;
}

std::vector<Tensor> sum_over_processes(const std::vector<Tensor>& ts, const DataParallel& dp) {
  auto sums = dp.comm->sum_all(dp.rank, ts);
  if (!sums) fail("train", "the process group's communicator has no sum all_reduce");
  return *sums;
}

Tensor shard_rows(const Tensor& t, int parts, int index) {
  if (t.rank() < 1 || parts < 1 || t.shape()[0] % parts != 0)
    fail("train", "cannot split {} into {} equal shards along dim 0", t.type_str(), parts);
  if (parts == 1) return t;
  const int64_t rows = t.shape()[0] / parts;
  Shape s = t.shape();
  s[0] = rows;
  Tensor out(t.dtype(), s);
  const size_t bytes = out.nbytes();
  std::memcpy(out.raw(), static_cast<const uint8_t*>(t.raw()) + bytes * static_cast<size_t>(index),
              bytes);
  return out;
}

Tensor first_rows(const Tensor& t, int64_t n) {
  if (t.rank() < 1 || n < 0 || n > t.shape()[0])
    fail("train", "cannot take {} rows of {}", n, t.type_str());
  Shape s = t.shape();
  s[0] = n;
  Tensor out(t.dtype(), s);
  std::memcpy(out.raw(), t.raw(), out.nbytes());
  return out;
}

emit::TensorInfo global_info(const emit::TensorInfo& ti, int replicas) {
  emit::TensorInfo g = ti;
  if (ti.sharded && !g.shape.empty()) g.shape[0] *= replicas;
  return g;
}

std::vector<std::vector<Tensor>> shard_inputs(const emit::Manifest& m,
                                              const std::vector<Tensor>& in, int replicas,
                                              int first, int count) {
  if (in.size() != m.inputs.size())
    fail("train", "train step inputs (got {}, expected {})", in.size(), m.inputs.size());
  std::vector<std::vector<Tensor>> per(static_cast<size_t>(count));
  for (int r = 0; r < count; ++r)
    for (size_t i = 0; i < in.size(); ++i)
      per[static_cast<size_t>(r)].push_back(
          m.inputs[i].sharded ? shard_rows(in[i], replicas, first + r) : in[i]);
  return per;
}

std::vector<Tensor> run_data_parallel(exec::Executable& exe, const emit::Manifest& m,
                                      const std::vector<Tensor>& in, const DataParallel& dp) {
  if (m.replicas != dp.replicas)
    fail("train", "train step emitted for {} replicas (expected {})", m.replicas, dp.replicas);
  if (!dp.multi_process())
    return std::move(
        exe.run_replicated("main", shard_inputs(m, in, dp.replicas, 0, dp.replicas)).at(0));
  std::vector<Tensor> out = std::move(
      exe.run_as_replicas("main", shard_inputs(m, in, dp.replicas, dp.rank * dp.local, dp.local),
                          *dp.comm, dp.rank)
          .at(0));
  // Without sync-BN each rank's batch statistics are its shard's: take rank 0's on every rank.
  std::vector<size_t> stats;
  for (size_t k = 0; k < m.outputs.size(); ++k)
    if (m.outputs[k].role == "bn_batch_stat") stats.push_back(k);
  if (!stats.empty() && !m.sync_bn) {
    std::vector<Tensor> mine;
    for (size_t k : stats) mine.push_back(out[k]);
    std::vector<Tensor> r0 = from_rank0(std::move(mine), dp);
    for (size_t j = 0; j < stats.size(); ++j) out[stats[j]] = std::move(r0[j]);
  }
  return out;
}

void broadcast_state(TrainState& s, const DataParallel& dp) {
  if (!dp.multi_process()) return;
  std::vector<Tensor> ts;
  for (auto* group : {&s.params, &s.opt, &s.running})
    for (const Tensor& t : *group) ts.push_back(t);
  // Scalars ride along as f64 (exact for counts below 2^53).
  ts.push_back(
      Tensor::from<double>(DType::kF64, {6},
                           {static_cast<double>(s.epoch), static_cast<double>(s.step),
                            static_cast<double>(s.batch_in_epoch), s.loss_sum,
                            static_cast<double>(s.format), static_cast<double>(s.policy.size())}));
  std::vector<Tensor> got = from_rank0(std::move(ts), dp);
  size_t i = 0;
  for (auto* group : {&s.params, &s.opt, &s.running})
    for (Tensor& t : *group) t = std::move(got[i++]);
  const Tensor& sc = got.at(i);
  s.epoch = static_cast<int>(sc.as_double(0));
  s.step = static_cast<int64_t>(sc.as_double(1));
  s.batch_in_epoch = static_cast<int64_t>(sc.as_double(2));
  s.loss_sum = sc.as_double(3);
  s.format = static_cast<int>(sc.as_double(4));
  // The checkpoint policy's JSON, one f64 per byte (exact), so every rank lowers the lr and
  // stops early alike.
  const auto n = static_cast<int64_t>(sc.as_double(5));
  if (n == 0) return void(s.policy.clear());
  std::vector<double> bytes(static_cast<size_t>(n), 0.0);
  if (dp.rank == 0)
    for (int64_t j = 0; j < n; ++j) bytes[j] = static_cast<unsigned char>(s.policy[j]);
  const Tensor got_bytes =
      from_rank0({Tensor::from<double>(DType::kF64, {n}, std::move(bytes))}, dp).at(0);
  s.policy.assign(static_cast<size_t>(n), '\0');
  for (int64_t j = 0; j < n; ++j) s.policy[j] = static_cast<char>(got_bytes.as_double(j));
}

bool any_rank(bool stop, const DataParallel& dp) {
  if (!dp.multi_process()) return stop;
  auto sums = dp.comm->sum_all(dp.rank, {Tensor::from<double>(DType::kF64, {}, {stop ? 1.0 : 0})});
  if (!sums) fail("train", "the process group's communicator has no sum all_reduce");
  return sums->at(0).as_double(0) > 0;
}

}  // namespace netspec::train
