#pragma once
// The rings RCCL can run at once inside a fully connected node (AMD Infinity Fabric, node.scale_up.type
// xgmi_mesh): rings over the node's GPUs that share no directed link, so that together they load every
// link evenly. See mesh_rings.cpp for the construction and its sources.
#include <vector>

namespace clustersim {

class Cluster;

// Whether the GPUs of `segment` (ranks of one node) are joined by a full xGMI mesh (every pair has its
// own link).
bool is_full_mesh_segment(const Cluster& cluster, const std::vector<int>& segment);
// Arc-disjoint rings over positions 0..n-1 of a fully connected group of n GPUs, each starting at 0:
// n = 8 gives 7 rings using all 56 directed links once; n = 2 one ring; otherwise the rotations
// i -> i + k (mod n) for every k prime to n. Empty for n < 2.
std::vector<std::vector<int>> mesh_ring_orders(int n);

}  // namespace clustersim
