#pragma once
// Two-tier fat-tree (leaf/spine folded Clos) over the NICs of every node. The shape rule (ports of a
// leaf split into downlinks and uplinks by the oversubscription, number of leaves and spines) is
// written once, in fat_tree_builder.cpp, and exposed here for error messages and tests.
#include "topologies/cluster.hpp"
#include "topologies/node_builder.hpp"

namespace clustersim {

struct FatTreeShape {
  int downlinks_per_leaf = 0;  // d: ports of a leaf facing NICs
  int uplinks_per_leaf = 0;    // u: ports of a leaf facing spines (one per spine)
  int leaves_per_rail = 0;     // rail_optimized only: leaves of each rail (NIC index)
  int leaves = 0;              // L
  int spines = 0;              // u when L > 1, else 0
};

// The shape for `spec`. Throws SpecError at /fabric/switch_radix (or /node/nics) when it cannot be
// built with the given radix in two tiers.
FatTreeShape fat_tree_shape(const ClusterSpec& spec);

void build_fat_tree(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes);

}  // namespace clustersim
