#pragma once
// The fabric of a single node: none. The node's NICs stay unconnected (they still count for power
// and cost); all GPU traffic stays in the scale-up domain.
#include "topologies/cluster.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/node_builder.hpp"

namespace clustersim {

void build_single_node(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes, const FabricPlane& plane);

}  // namespace clustersim
