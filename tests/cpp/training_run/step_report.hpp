#pragma once
// A simulated step's report as simulate() gives it, for the training-run model: its counts from the
// built cluster's bill of materials, with a chosen step time, tokens per step and cluster power. Shared
// by time_to_train_test and bench/bench_time_to_train (no GoogleTest here).
#include "sim/cost/cost_model.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/report/report.hpp"
#include "topologies/cluster.hpp"
#include "topologies/topology_metrics.hpp"

namespace clustersim::testing {

inline Report step_report(const ClusterSpec& spec, double step_time_s, double tokens_per_step, double cluster_avg_kw) {
  const Cluster cluster = Cluster::build(spec);
  const TopologyMetrics metrics = compute_metrics(cluster);
  const GpuSpec gpu = find_gpu(spec.gpu_id, spec.source_file, "/gpu");
  Report r;
  r.step_time_s = step_time_s;
  r.tokens_per_s = tokens_per_step / step_time_s;
  r.run.gpus = spec.gpu_count();
  r.run.nodes = spec.nodes;
  r.power = PowerStats{};
  r.power->cluster_avg_kw = cluster_avg_kw;
  r.cost = compute_cost(cost_inputs(cluster, metrics, gpu, step_time_s, tokens_per_step, cluster_avg_kw));
  return r;
}

}  // namespace clustersim::testing
