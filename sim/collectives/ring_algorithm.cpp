// Ring collectives, as NCCL runs them.
//
// All-reduce over N ranks: a reduce-scatter then an all-gather around a ring, 2(N-1) steps; in each
// step every rank sends S/N bytes to its successor. Each rank therefore sends D = 2(N-1)/N * S bytes,
// and on an idle fabric whose slowest hop has bandwidth B and latency a:
//     t = 2(N-1)/N * S/B + 2(N-1) * a.
// All-gather and reduce-scatter are one half of that: D = (N-1)/N * S (S = the full buffer), N-1 steps.
//
// Channels: across nodes NCCL runs several rings at once (channels) so that every NIC carries
// traffic; each ring carries S/C of the data. NCCL keeps a ring on one rail (it prefers to leave and
// enter every node through the same NIC index; NCCL_CROSS_NIC), so ring c enters each node at the GPU
// on rail c, visits the node's other GPUs over NVLink, comes back to the rail-c GPU (PXN: the last
// GPU hands its data to the GPU next to the rail's NIC) and leaves through NIC c to the rail-c GPU of
// the next node. Rail-aligned inter-node hops stay under one rail's leaf switch on rail-optimized
// fabrics. Within one node (one NVSwitch domain) one ring already saturates every GPU port: C = 1.
//
// The plan is the ring's steady state: one flow per (source, destination) pair carrying all the bytes
// that pair exchanges over every step and channel. A synchronized ring moves at the pace of its
// slowest hop, which is what "the phase ends when its slowest flow ends" gives on a flow model.
#include "sim/collectives/ring_algorithm.hpp"

#include <algorithm>
#include <vector>

#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

// Steps of the ring and the fraction of the buffer each rank sends, per collective kind.
struct RingShape {
  int steps;
  double bytes_fraction;
};

RingShape ring_shape(CollectiveKind kind, int n) {
  const double nn = n;
  switch (kind) {
    case CollectiveKind::all_reduce: return {2 * (n - 1), 2.0 * (nn - 1) / nn};
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: return {n - 1, (nn - 1) / nn};
    default: return {0, 0.0};
  }
}

// Consecutive ranks of the group that live on the same node.
std::vector<std::vector<int>> node_segments(const Cluster& cluster, const std::vector<int>& ranks) {
  std::vector<std::vector<int>> segments;
  int current_node = -1;
  for (int r : ranks) {
    const int node = cluster.node_of_gpu(r);
    if (segments.empty() || node != current_node) segments.emplace_back();
    segments.back().push_back(r);
    current_node = node;
  }
  return segments;
}

}  // namespace

bool ring_supports(CollectiveKind kind) {
  return kind == CollectiveKind::all_reduce || kind == CollectiveKind::all_gather ||
         kind == CollectiveKind::reduce_scatter;
}

CollectivePlan plan_ring(const Cluster& cluster, const CollectiveRequest& request) {
  CollectivePlan plan;
  plan.algorithm = "ring";
  const std::vector<int>& ranks = *request.ranks;
  const int n = static_cast<int>(ranks.size());
  if (n <= 1 || request.bytes <= 0.0) return plan;

  const RingShape shape = ring_shape(request.kind, n);
  const double bytes_per_rank = shape.bytes_fraction * request.bytes;
  const auto segments = node_segments(cluster, ranks);
  const int nics = cluster.spec().node.nics;
  const int channels = segments.size() > 1 ? std::max(1, nics) : 1;
  plan.channels = channels;
  const double bytes_per_hop = bytes_per_rank / channels;

  // All hops of all channels, then merged per (src, dst) pair.
  std::vector<Transfer> hops;
  hops.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(channels) * 2);
  if (segments.size() == 1) {
    for (std::size_t i = 0; i < ranks.size(); ++i)
      hops.push_back(Transfer{ranks[i], ranks[(i + 1) % ranks.size()], bytes_per_hop});
  }
  for (int c = 0; segments.size() > 1 && c < channels; ++c) {
    for (std::size_t s = 0; s < segments.size(); ++s) {
      const auto& seg = segments[s];
      const auto& next = segments[(s + 1) % segments.size()];
      const std::size_t entry = static_cast<std::size_t>(c) % seg.size();
      // Around the node from the rail GPU back to it, then to the next node's rail GPU.
      for (std::size_t i = 0; i + 1 < seg.size() + 1 && seg.size() > 1; ++i)
        hops.push_back(Transfer{seg[(entry + i) % seg.size()], seg[(entry + i + 1) % seg.size()], bytes_per_hop});
      hops.push_back(Transfer{seg[entry], next[static_cast<std::size_t>(c) % next.size()], bytes_per_hop});
    }
  }
  std::sort(hops.begin(), hops.end(), [](const Transfer& a, const Transfer& b) {
    return a.src_gpu != b.src_gpu ? a.src_gpu < b.src_gpu : a.dst_gpu < b.dst_gpu;
  });
  CollectivePhase phase;
  for (const Transfer& t : hops) {
    if (!phase.transfers.empty() && phase.transfers.back().src_gpu == t.src_gpu &&
        phase.transfers.back().dst_gpu == t.dst_gpu) {
      phase.transfers.back().bytes += t.bytes;
    } else {
      phase.transfers.push_back(t);
    }
  }

  // Per-step latency: the slowest hop's route latency (every step waits for every hop).
  double hop_latency_s = 0.0;
  std::vector<int> route;
  for (const Transfer& t : phase.transfers) {
    route.clear();
    cluster.route(t.src_gpu, t.dst_gpu, 0, route);
    hop_latency_s = std::max(hop_latency_s, cluster.route_latency_s(route));
  }
  plan.latency_s = shape.steps * hop_latency_s;
  plan.phases.push_back(std::move(phase));
  return plan;
}

}  // namespace clustersim
