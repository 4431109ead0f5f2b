#pragma once
#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

CollectivePlan plan_ring(const CollectiveContext& ctx, const CollectiveRequest& request);

// The hops of the rings NCCL builds over `ranks` (rail-aligned channels across nodes, see
// ring_algorithm.cpp), each carrying `bytes_per_hop`, merged per pair. With `close_ring` false the
// hop that closes the ring back to the first rank is left out (a pipelined chain: broadcast).
std::vector<Transfer> ring_hops(const Cluster& cluster, const std::vector<int>& ranks, int channels,
                                double bytes_per_hop, bool close_ring);
// The number of channels a ring over `ranks` uses: one per NIC of a node across nodes; within one
// node one, or the number of arc-disjoint rings of a full xGMI mesh (mesh_rings.hpp: 7 for 8 GPUs).
int ring_channels(const Cluster& cluster, const std::vector<int>& ranks);

}  // namespace clustersim
