#pragma once
// The storage a training run writes its checkpoints to: the cluster spec's `storage` block
// (topologies/cluster_spec.hpp) with its defaults filled in (assumptions, docs/time_to_train.md).
#include <string>

#include "topologies/cluster_spec.hpp"

namespace clustersim {

struct Storage {
  std::string kind;  // parallel_fs | object_store | local_nvme_async
  double aggregate_GBps = 0.0;
  double per_node_GBps = 0.0;
  double snapshot_GBps = 0.0;  // per GPU, device to host
  bool asynchronous = false;   // local_nvme_async is always asynchronous
  // Write (and read) bandwidth of `nodes` nodes together, GB/s: min(aggregate, nodes x per node);
  // local NVMe has no shared system: nodes x per node.
  double bandwidth_GBps(double nodes) const;
};

Storage storage_of(const ClusterSpec& cluster);

}  // namespace clustersim
