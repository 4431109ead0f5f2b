// Spine-leaf. With S = fabric.spines spines and u uplinks per leaf (S divides u), every leaf has u / S
// parallel links to every spine; a spine uses L * u / S of its fabric.spine_radix ports. Everything
// else (leaf shape, rails, oversubscription) is the 2-tier fat-tree rule.
#include "topologies/spine_leaf_builder.hpp"

#include "sim/core/error.hpp"
#include "topologies/fat_tree_builder.hpp"

namespace clustersim {

void build_spine_leaf(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes, const FabricPlane& plane) {
  if (spec.fabric.tiers != 2)  // parse_cluster_spec refuses it too (specs built in code)
    throw SpecError(spec.source_file, "/fabric/tiers",
                    "a spine_leaf fabric has 2 tiers, got " + std::to_string(spec.fabric.tiers));
  build_fat_tree(cluster, spec, nodes, plane);
}

}  // namespace clustersim
