// Data-parallel training (docs/distributed.md): the train step emitted for R replicas runs on R
// shards of each global batch — R threads of this process (run_replicated), or one replica per
// process meeting through a Communicator (Gloo, src/dist), or L threads in each of P processes
// (replicas rank·L .. rank·L + L-1 here; exec::TwoLevelComm). Shard r of a batch of n rows is rows
// [r·n/R, (r+1)·n/R): deterministic, so every process cuts the same global batch the same way.
// Replicas end a step with identical parameters (the module averages the gradients); without
// sync-BN each replica has its own shard's BN statistics and the running statistics follow
// replica 0's, as PyTorch DDP's broadcast_buffers does.
#pragma once
#include <vector>

#include "core/tensor.h"
#include "emit/manifest.h"
#include "exec/backend.h"
#include "train/checkpoint.h"

namespace netspec::train {

struct DataParallel {
  int replicas = 1;                    // R: the module's replica count (total over processes)
  exec::Communicator* comm = nullptr;  // set: replicas in several processes, this one is `rank`
  int rank = 0;
  int local = 1;  // processes: replica threads per process (replicas = processes · local)
  bool multi_process() const { return comm != nullptr; }
};

// Rows [index·n/parts, (index+1)·n/parts) of t along dim 0 (n must divide by parts).
Tensor shard_rows(const Tensor& t, int parts, int index);
// The first n rows of t (dim 0).
Tensor first_rows(const Tensor& t, int64_t n);
// A manifest entry at the global batch: a sharded entry's dim 0 times `replicas`.
emit::TensorInfo global_info(const emit::TensorInfo& ti, int replicas);
// Replicas [first, first + count) of `replicas`: each one's inputs, the sharded ones cut to its
// rows (shard_rows), the others shared.
std::vector<std::vector<Tensor>> shard_inputs(const emit::Manifest& m,
                                              const std::vector<Tensor>& in, int replicas,
                                              int first, int count);
// Runs the train step (`in` in manifest order, sharded inputs at the global batch) as the data
// parallel replicas and returns the outputs of replica 0 (threads) or of this rank (processes,
// with rank 0's BN batch statistics when each replica has its own, so all ranks agree).
std::vector<Tensor> run_data_parallel(exec::Executable& exe, const emit::Manifest& m,
                                      const std::vector<Tensor>& in, const DataParallel& dp);
// Processes only: every rank takes rank 0's state (params, optimizer state, running stats,
// epoch, step, position, loss sum), so all resume from the checkpoint rank 0 read.
void broadcast_state(TrainState& s, const DataParallel& dp);
// Processes only: rank 0's tensors on every rank (same types and shapes on every rank).
std::vector<Tensor> from_rank0(std::vector<Tensor> ts, const DataParallel& dp);
// Processes only: the sum over the processes of each tensor (identical bits on every rank).
std::vector<Tensor> sum_over_processes(const std::vector<Tensor>& ts, const DataParallel& dp);
// Processes only: true on every rank when any rank's `stop` is true (so all stop at one step).
bool any_rank(bool stop, const DataParallel& dp);

}  // namespace netspec::train
