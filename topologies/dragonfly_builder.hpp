#pragma once
// Dragonfly (Kim, Dally, Scott, Abts, ISCA 2008): groups of routers joined all-to-all by local links,
// groups joined by global links, NICs spread over the routers.
#include <optional>

#include "topologies/cluster.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/node_builder.hpp"

namespace clustersim {

struct DragonflyShape {
  int groups = 0;                   // G
  int routers_per_group = 0;        // a
  int global_links_per_router = 0;  // h
  int terminals_per_router = 0;     // p = ceil(NICs / (G a))
  int links_per_group_pair = 0;     // floor(a h / (G - 1)): global links between every two groups
};

// The shape for `spec`. Throws SpecError at /fabric/groups or /fabric/switch_radix.
DragonflyShape dragonfly_shape(const ClusterSpec& spec);

void build_dragonfly(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes, const FabricPlane& plane);

// Bisection across the node halves when they are whole groups (G even, routers full):
// min(NICs / 2, (G / 2)^2 x links per group pair) x line rate.
std::optional<double> dragonfly_bisection_Bps(const Cluster& cluster);

}  // namespace clustersim
