#include "sim/serving/deployment_cluster.hpp"

#include <algorithm>

#include "sim/core/error.hpp"

namespace clustersim {

Cluster build_deployment_cluster(const ClusterSpec& spec, std::int64_t gpus) {
  const std::int64_t per_node = std::max(spec.node.gpus, 1);
  const std::int64_t nodes = (gpus + per_node - 1) / per_node;
  if (nodes < spec.nodes) {
    ClusterSpec small = spec;
    small.nodes = static_cast<int>(nodes);
    try {
      return Cluster::build(small);
    } catch (const SpecError&) {
      // the fabric needs more nodes (fixed shapes): build it whole
    }
  }
  return Cluster::build(spec);
}

}  // namespace clustersim
