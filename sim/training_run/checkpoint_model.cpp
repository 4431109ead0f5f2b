#include "sim/training_run/checkpoint_model.hpp"

#include "workloads/training_state.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {

double checkpoint_bytes(const WorkloadSpec& workload) {
  const ParameterStateBytes per_param = parameter_state_bytes(workload.training);
  return total_parameters(workload.model) * (per_param.weights + per_param.optimizer);
}

CheckpointCost checkpoint_cost(double bytes, const Storage& storage, double nodes, double gpus) {
  CheckpointCost c;
  c.bytes = bytes;
  const double bandwidth_Bps = storage.bandwidth_GBps(nodes) * 1e9;
  c.write_s = bytes / bandwidth_Bps;
  c.read_s = c.write_s;
  // Asynchronous: each GPU copies its share to host memory over PCIe, then training resumes.
  c.stall_s = storage.asynchronous ? bytes / gpus / (storage.snapshot_GBps * 1e9) : c.write_s;
  return c;
}

}  // namespace clustersim
