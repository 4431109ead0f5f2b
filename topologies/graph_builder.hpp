#pragma once
// `graph`: explicit devices (fabric.devices) and links (fabric.links) between them and the devices
// of the nodes ("node<n>/gpu<g>", "node<n>/nic<j>", "node<n>/nvswitch", ...), for any topology the
// other builders do not make.
#include "topologies/cluster.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/node_builder.hpp"

namespace clustersim {

void build_graph(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes, const FabricPlane& plane);

}  // namespace clustersim
