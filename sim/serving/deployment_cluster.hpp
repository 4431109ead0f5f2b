#pragma once
// The part of the cluster a serving deployment's timing needs: only its GPUs matter, so the cluster is
// built with as many nodes as they take (the whole cluster when its fabric cannot be built that small).
// Used by the replica's links and by the KV-cache transfer of disaggregated serving.
#include <cstdint>

#include "topologies/cluster.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {

Cluster build_deployment_cluster(const ClusterSpec& spec, std::int64_t gpus);

}  // namespace clustersim
