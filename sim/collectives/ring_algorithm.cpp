// Ring collectives, as NCCL runs them.
//
// All-reduce over N ranks: a reduce-scatter then an all-gather around a ring, 2(N-1) steps; in each
// step every rank sends S/N bytes to its successor. Each rank therefore sends D = 2(N-1)/N * S bytes,
// and on an idle fabric whose slowest hop has bandwidth B and latency a:
//     t = 2(N-1)/N * S/B + 2(N-1) * a.
// All-gather and reduce-scatter are one half of that: D = (N-1)/N * S (S = the full buffer), N-1 steps.
// Broadcast and reduce are a pipelined chain from (to) the root: every hop carries S, N-1 steps:
//     t = S/B + (N-1) * a.
//
// Channels: across nodes NCCL runs several rings at once (channels) so that every NIC carries
// traffic; each ring carries S/C of the data. NCCL keeps a ring on one rail (it prefers to leave and
// enter every node through the same NIC index; NCCL_CROSS_NIC), so ring c enters each node at the GPU
// on rail c (the GPU next to NIC c: with 4 NICs for 8 GPUs, GPUs 0, 2, 4, 6), visits the node's other GPUs over NVLink,
// comes back to the rail-c GPU (PXN: the last GPU hands its data to the GPU next to the rail's NIC) and leaves through
// NIC c to the rail-c GPU of the next node. Rail-aligned inter-node hops stay under one rail's leaf switch on
// rail-optimized fabrics. Within one node (one NVSwitch domain) one ring already saturates every GPU port: C = 1.
//
// A fully connected node without a switch (xgmi_mesh: AMD Instinct, 7 links per GPU) is different: a ring
// step takes one link, so one ring is bound by one link. RCCL runs several rings over different links
// (mesh_rings.cpp): within such a node C = the number of arc-disjoint rings (7 for 8 GPUs) and channel c
// takes ring c, so every link carries 1/C of the data. Across nodes every channel's pass through a mesh
// node is spread evenly over those rings (each carries 1/C of the node's intra-node bytes).
//
// The plan is the ring's steady state: one flow per (source, destination) pair carrying all the bytes
// that pair exchanges over every step and channel.
#include "sim/collectives/ring_algorithm.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/collectives/mesh_rings.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {

int ring_channels(const Cluster& cluster, const std::vector<int>& ranks) {
  if (!within_one_node(cluster, ranks)) return std::max(1, cluster.spec().node.nics);
  if (is_full_mesh_segment(cluster, ranks))
    return std::max(1, static_cast<int>(mesh_ring_orders(static_cast<int>(ranks.size())).size()));
  return 1;
}

namespace {

// The hops of ring `order` (positions into `members`), each carrying `bytes`; without `close_ring` the
// hop back to the first member is left out.
void add_ring(std::vector<Transfer>& hops, const std::vector<int>& members, const std::vector<int>& order, double bytes,
              bool close_ring) {
  const std::size_t n = order.size();
  for (std::size_t i = 0; i + (close_ring ? 0 : 1) < n; ++i)
    hops.push_back(Transfer{members[static_cast<std::size_t>(order[i])],
                            members[static_cast<std::size_t>(order[(i + 1) % n])], bytes});
}

// The member of `segment` (GPUs of one node) next to NIC c: the rail-c GPU (GPUs are numbered node by
// node; with fewer NICs than GPUs, consecutive GPUs share a NIC; with more, GPU g owns NICs g k..g k +
// k - 1). A segment without that rail's GPU uses its (c mod size)-th member.
std::size_t rail_member(const Cluster& cluster, const std::vector<int>& segment, int c) {
  const NodeSpec& node = cluster.spec().node;
  const int gpus = std::max(1, node.gpus);
  const int nic = c % std::max(1, node.nics);
  for (std::size_t i = 0; i < segment.size(); ++i) {
    const int local = segment[i] % gpus;
    if (node.nics > node.gpus ? local == node.gpu_of_nic(nic) : node.nic_of_gpu(local) == nic) return i;
  }
  return static_cast<std::size_t>(c) % segment.size();
}

}  // namespace

std::vector<Transfer> ring_hops(const Cluster& cluster, const std::vector<int>& ranks, int channels,
                                double bytes_per_hop, bool close_ring) {
  std::vector<Transfer> hops;
  const auto segments = node_segments(cluster, ranks);
  if (segments.size() == 1) {
    const std::size_t n = ranks.size();
    if (is_full_mesh_segment(cluster, ranks) && n > 2) {
      // Channel c runs mesh ring c mod R (every ring starts at ranks[0], the root of a chain).
      const auto rings = mesh_ring_orders(static_cast<int>(n));
      for (int c = 0; c < channels; ++c)
        add_ring(hops, ranks, rings[static_cast<std::size_t>(c) % rings.size()], bytes_per_hop, close_ring);
    } else {
      for (std::size_t i = 0; i + (close_ring ? 0 : 1) < n; ++i)
        hops.push_back(Transfer{ranks[i], ranks[(i + 1) % n], bytes_per_hop});
    }
  } else {
    // Every channel goes around each node from its rail GPU back to it (PXN): the same edges, all of
    // the node's ring, whatever the entry. They are listed once, carrying every channel's bytes (added
    // channel by channel, as merging the channels' copies adds them).
    double intra_bytes = bytes_per_hop;
    for (int c = 1; c < channels; ++c)
      intra_bytes += bytes_per_hop;
    hops.reserve(ranks.size() + segments.size() * static_cast<std::size_t>(channels));
    for (const auto& seg : segments) {
      if (is_full_mesh_segment(cluster, seg) && seg.size() > 2) {
        const auto rings = mesh_ring_orders(static_cast<int>(seg.size()));
        for (const auto& ring : rings)
          add_ring(hops, seg, ring, intra_bytes / static_cast<double>(rings.size()), true);
        continue;
      }
      for (std::size_t a = 0; seg.size() > 1 && a < seg.size(); ++a)
        hops.push_back(Transfer{seg[a], seg[a + 1 == seg.size() ? 0 : a + 1], intra_bytes});
    }
    // Then from the rail GPU to the next node's rail GPU, per channel.
    std::vector<std::size_t> entry(segments.size());
    for (int c = 0; c < channels; ++c) {
      for (std::size_t s = 0; s < segments.size(); ++s)
        entry[s] = rail_member(cluster, segments[s], c);
      for (std::size_t s = 0; s < segments.size(); ++s) {
        if (!close_ring && s + 1 == segments.size()) continue;
        const std::size_t next = s + 1 == segments.size() ? 0 : s + 1;
        hops.push_back(Transfer{segments[s][entry[s]], segments[next][entry[next]], bytes_per_hop});
      }
    }
  }
  sort_and_merge_transfers(hops);
  return hops;
}

CollectivePlan plan_ring(const CollectiveContext& ctx, const CollectiveRequest& request) {
  CollectivePlan plan;
  const int n = static_cast<int>(request.ranks->size());
  if (n <= 1 || request.bytes <= 0.0) return plan;

  // Bytes each rank sends (per channel: / C) and the steps, per collective kind.
  double bytes_per_rank = 0.0;
  int steps = 0;
  bool close_ring = true;
  std::vector<int> order = *request.ranks;
  switch (request.kind) {
    case CollectiveKind::all_reduce:
      bytes_per_rank = 2.0 * (n - 1) / n * request.bytes;
      steps = 2 * (n - 1);
      break;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      bytes_per_rank = static_cast<double>(n - 1) / n * request.bytes;
      steps = n - 1;
      break;
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce:
      // A chain starting at the root (reduce: the same links, data flowing toward the root).
      std::rotate(order.begin(), order.begin() + request.root, order.end());
      bytes_per_rank = request.bytes;
      steps = n - 1;
      close_ring = false;
      break;
    default:
      return plan;
  }
  plan.channels = ring_channels(ctx.cluster, order);
  CollectivePhase phase;
  phase.name = to_string(request.kind);
  phase.transfers = ring_hops(ctx.cluster, order, plan.channels, bytes_per_rank / plan.channels, close_ring);
  if (request.kind == CollectiveKind::reduce) {
    for (auto& t : phase.transfers)
      std::swap(t.src_gpu, t.dst_gpu);
    sort_and_merge_transfers(phase.transfers);
  }
  phase.steps = steps;
  phase.latency_s = steps * max_hop_latency_s(ctx, phase.transfers);
  plan.phases.push_back(std::move(phase));
  return plan;
}

}  // namespace clustersim
