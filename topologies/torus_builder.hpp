#pragma once
// Torus: GPUs linked directly (no switches), with wrap-around in every dimension, as TPU pods and
// other direct-connect machines do. The GPUs forward (a route may pass through other GPUs).
#include <optional>
#include <vector>

#include "topologies/cluster.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/node_builder.hpp"

namespace clustersim {

void build_torus(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& nodes, const FabricPlane& plane);

// The coordinates of GPU `rank` (dimension 0 varies fastest).
std::vector<int> torus_coordinates(const std::vector<int>& dims, int rank);

// Bisection across the largest dimension: 2 x (GPUs / a_max) x link bandwidth, when a_max is even
// and the torus is the only path between GPUs (scale_up type none, no PCIe tree, no shared NIC).
std::optional<double> torus_bisection_Bps(const Cluster& cluster);

}  // namespace clustersim
