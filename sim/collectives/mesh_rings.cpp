// Rings over a fully connected node (AMD Infinity Fabric xGMI mesh: MI300X, MI325X, MI355X).
//
// One ring uses one link per hop: with 7 links per GPU a single ring is bound by one link (64 GB/s per
// direction on MI300X). RCCL runs several rings over different links (channels); its measured 8 x MI300X
// all-reduce bus bandwidth, 319 GB/s at 16 GiB, is 7 x the 45-48 GB/s that one xGMI link delivers
// (ROCm blog "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X", 2025-03-02:
// "the slowest link is what defines the total bandwidth ... RCCL Bandwidth to be effectively capped at
// 310-330 GB/s", i.e. 7 links at once). RCCL's own ring list for an 8 x MI300X platform (ROCm/rccl
// src/graph/rome_models.cc, rome_model_81, 8 GPUs x 7 xGMI links) has 8 rings covering all 56 directed
// links (8 of them twice).
//
// The model runs n - 1 rings that share no directed link where such a set exists, so every link carries
// 1/(n-1) of the data and a ring all-reduce's bus bandwidth is (n-1) links' worth:
//   t = 2(N-1)/N * S / ((N-1) * B_link) = 2 S / (N * B_link)      (N = n GPUs of one node).
// The complete directed graph on n vertices splits into n - 1 directed Hamiltonian cycles for every n
// except 4 and 6 (Tillson, "A Hamiltonian decomposition of K*_2m, 2m >= 8", J. Combin. Theory B 29, 1980).
// For n = 8 the table below is one such decomposition (found by exhaustive search; the test
// `MeshRings.EightGpusGiveSevenArcDisjointRings` checks it). For other n the rotations i -> i + k for k
// prime to n are Hamiltonian and arc-disjoint (n prime: all n - 1 of them; n = 4, 6: 2 rings).
#include "sim/collectives/mesh_rings.hpp"

#include <numeric>

#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

constexpr int k_mesh8_rings[7][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7}, {0, 2, 1, 3, 5, 4, 7, 6}, {0, 3, 1, 4, 6, 2, 7, 5}, {0, 4, 1, 5, 7, 2, 6, 3},
    {0, 5, 3, 6, 1, 7, 4, 2}, {0, 6, 5, 2, 4, 3, 7, 1}, {0, 7, 3, 2, 5, 1, 6, 4},
};

}  // namespace

bool is_full_mesh_segment(const Cluster& cluster, const std::vector<int>& segment) {
  return segment.size() >= 2 && cluster.spec().node.scale_up.type == "xgmi_mesh";
}

std::vector<std::vector<int>> mesh_ring_orders(int n) {
  std::vector<std::vector<int>> rings;
  if (n < 2) return rings;
  if (n == 8) {
    for (const auto& ring : k_mesh8_rings)
      rings.emplace_back(std::begin(ring), std::end(ring));
    return rings;
  }
  for (int k = 1; k < n; ++k) {
    if (std::gcd(k, n) != 1) continue;
    std::vector<int> ring(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i)
      ring[static_cast<std::size_t>(i)] = i * k % n;
    rings.push_back(std::move(ring));
  }
  return rings;
}

}  // namespace clustersim
