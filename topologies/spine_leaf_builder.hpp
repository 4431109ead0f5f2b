#pragma once
// Ethernet (RoCE) spine-leaf: a 2-tier leaf/spine Clos whose designer picks the spine count
// (fabric.spines) and the spine radix (fabric.spine_radix); each leaf spreads its uplinks evenly over
// the spines. The leaf rule (uplinks and downlinks from the radix and the oversubscription) is the
// fat-tree's (fat_tree_builder.cpp). fabric.technology defaults to ethernet.
#include "topologies/cluster.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/node_builder.hpp"

namespace clustersim {

void build_spine_leaf(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes, const FabricPlane& plane);

}  // namespace clustersim
