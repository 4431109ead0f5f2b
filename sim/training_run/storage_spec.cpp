#include "sim/training_run/storage_spec.hpp"

#include <algorithm>

namespace clustersim {
namespace {

// Defaults, assumptions labelled as such (docs/time_to_train.md):
// aggregate: Llama 3's Tectonic file system sustained 2 TB/s (peak 7 TB/s) for checkpoints
// (arXiv 2407.21783, Section 3.3.1 "Storage"); per node: one 200 Gb/s front-end link (assumption).
constexpr double kAggregateGBps = 2000.0;
constexpr double kPerNodeGBps = 25.0;

}  // namespace

double Storage::bandwidth_GBps(double nodes) const {
  const double nodes_GBps = nodes * per_node_GBps;
  return kind == "local_nvme_async" ? nodes_GBps : std::min(aggregate_GBps, nodes_GBps);
}

Storage storage_of(const ClusterSpec& cluster) {
  const StorageSpec& s = cluster.storage;
  Storage out;
  out.kind = s.kind;
  out.aggregate_GBps = s.aggregate_GBps.value_or(kAggregateGBps);
  out.per_node_GBps = s.per_node_GBps.value_or(kPerNodeGBps);
  // The snapshot crosses the GPU's PCIe link to host memory (node.pcie_bandwidth_GBps).
  out.snapshot_GBps = s.snapshot_GBps.value_or(cluster.node.pcie_bandwidth_GBps);
  out.asynchronous = s.asynchronous || s.kind == "local_nvme_async";
  return out;
}

}  // namespace clustersim
