#pragma once
// What a checkpoint costs: its size from the model (weights + optimizer state, the memory model's
// per-parameter bytes, workloads/training_state.hpp), its write and read time over the storage, and
// what it stalls training for (synchronous: the write; asynchronous: the snapshot to host memory).
#include "sim/training_run/storage_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {

// Bytes of one full checkpoint: every parameter once (its weights and optimizer state), whatever the
// sharding: ZeRO/FSDP shards split the same bytes over more writers.
double checkpoint_bytes(const WorkloadSpec& workload);

struct CheckpointCost {
  double bytes = 0.0;
  double write_s = 0.0;  // bytes / storage bandwidth of the job's nodes
  double read_s = 0.0;   // the load at a restart, same bandwidth
  double stall_s = 0.0;  // training stops this long per checkpoint
};

CheckpointCost checkpoint_cost(double bytes, const Storage& storage, double nodes, double gpus);

}  // namespace clustersim
