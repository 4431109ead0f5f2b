#pragma once
// Fat-trees (folded Clos) of 2 or 3 tiers over the NICs of every node, plain or rail-optimized, with
// oversubscription at the leaf tier. The shape rule is written once, in fat_tree_builder.cpp, and
// exposed here for error messages, metrics and tests. spine_leaf and rail_optimized fabrics are
// built by the same code (their own files say what differs).
#include <optional>

#include "topologies/cluster.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/node_builder.hpp"

namespace clustersim {

struct FatTreeShape {
  int tiers = 2;
  bool rails = false;            // rail-optimized
  int downlinks_per_leaf = 0;    // d: ports of a leaf facing NICs
  int uplinks_per_leaf = 0;      // u: ports of a leaf facing spines (aggregation switches in 3 tiers)
  int leaves_per_rail = 0;       // 2-tier rail-optimized: leaves of each rail (NIC index)
  int leaves = 0;                // L
  int spines = 0;                // 2 tiers: spine count (0 for a single leaf); 3 tiers: aggregation switches
  int links_per_leaf_spine = 1;  // 2 tiers: parallel links between a leaf and each spine
  // 3 tiers
  int leaves_per_pod = 0;              // E
  int pods = 0;                        // P
  int uplinks_per_aggregation = 0;     // A (= E: 1:1 at the aggregation tier)
  int cores_per_group = 0;             // C: cores reached by aggregation switch j of every pod
  int links_per_aggregation_core = 0;  // m: parallel links between an aggregation switch and each core
  int cores = 0;                       // u * C
};

// The shape for `spec`. Throws SpecError at /fabric/switch_radix (or /fabric/spine_radix,
// /fabric/spines, /node/nics) when it cannot be built.
FatTreeShape fat_tree_shape(const ClusterSpec& spec);

// The leaf (index in 0..L-1 of a plane) that NIC `nic` of node `node` is cabled to.
int fat_tree_leaf_of(const FatTreeShape& shape, const ClusterSpec& spec, int node, int nic);

void build_fat_tree(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes, const FabricPlane& plane);

// Bisection bandwidth across the node halves: NICs / 2 x line rate x min(1, u / d), when the halves
// are whole leaf groups (and whole pods in 3 tiers) and every NIC is fed at its line rate.
std::optional<double> fat_tree_bisection_Bps(const Cluster& cluster);

}  // namespace clustersim
