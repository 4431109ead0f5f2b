#pragma once
// How a collective becomes network work: a sequence of phases, each a set of concurrent transfers
// followed by a latency term.
//
// A collective is not decomposed into its chunk messages (2N(N-1) for a ring): that would cost too
// much and add nothing on a flow model. Each phase holds the concurrent flows of the algorithm's
// steady state, one per (source, destination) pair with all the bytes that pair exchanges during the
// phase (merged over pipelined steps and channels). A phase ends when its slowest flow ends, which
// is how a synchronized, pipelined algorithm behaves: it moves at the pace of its slowest hop. Its
// latency term (steps x per-step latency) is added when its bytes have moved.
#include <string>
#include <vector>

#include "sim/collectives/link_load_scratch.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/network/network_profile.hpp"
#include "workloads/execution_graph.hpp"
#include "workloads/expert_routing.hpp"

namespace clustersim {

class Cluster;

struct CollectivePhase {
  std::string name;  // "reduce-scatter", "inter-node all-reduce", ...
  std::vector<Transfer> transfers;
  int steps = 0;           // algorithm steps in this phase (each pays a per-step latency)
  double latency_s = 0.0;  // steps x per-step latency, added after the transfers
};

struct CollectivePlan {
  std::string algorithm;  // the registry's name: "ring", "tree", ... (set by the registry, not the planner)
  std::vector<CollectivePhase> phases;
  int channels = 1;  // parallel rings or trees (NCCL channels) the bytes were spread over
  // NCCL's wire protocol (nccl_protocol.hpp: "LL", "LL128", "Simple"); its bandwidth share is in the
  // transfers' bytes (bytes on the wire), its latency in the phases'.
  std::string protocol = "Simple";

  double latency_s() const;
};

// What a planner sees of the world.
struct CollectiveContext {
  const Cluster& cluster;
  const NetworkProfile& profile;
  // Optional per-link scratch for idle-fabric ratings (link_load_scratch.hpp); null: each rating
  // allocates its own. The same answers either way.
  LinkLoadScratch* scratch = nullptr;
};

// What an algorithm is asked to plan.
struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::all_reduce;
  const std::vector<int>* ranks = nullptr;  // the group, in order (global ranks == GPU ranks)
  double bytes = 0.0;                       // the buffer size per rank (nccl-tests convention)
  // all_to_allv: bytes from group member i to member j at [i * n + j]; null for even all_to_all.
  const std::vector<double>* matrix = nullptr;
  int root = 0;  // broadcast and reduce: index of the root in `ranks`
  // A MoE dispatch or combine: the routing its tokens follow (DeepEP deduplicates by node with it);
  // null for any other collective.
  const ExpertRouting* routing = nullptr;
};

// The largest per-step latency of a hop among `transfers`: a hop's route's wire latency plus the
// profile's per-step latency of the route's technologies (the largest of them).
double max_hop_latency_s(const CollectiveContext& ctx, const std::vector<Transfer>& transfers);
// Sorts by (src, dst) and merges transfers of the same pair into one flow carrying their bytes.
void sort_and_merge_transfers(std::vector<Transfer>& transfers);
// GPUs that own k > 1 NICs (node.nics_per_gpu()) send every transfer to another node over all k: NCCL's
// network plugins stripe a connection's messages over the NICs next to the GPU (aws-ofi-nccl's RDMA
// protocol on p5 "rails"; NCCL merges the ports of a dual-port NIC, NCCL_IB_MERGE_NICS). Each such
// transfer becomes k transfers of 1/k of its bytes, lane 0..k-1 (the route takes NIC `lane` of the
// GPU). Transfers inside a node are left alone.
void stripe_over_nics(const Cluster& cluster, std::vector<Transfer>& transfers);
// Consecutive ranks of the group that live on the same node. A group that lies inside one rack-scale
// NVLink domain (GB200/GB300 NVL72: node.scale_up.domain_gpus spanning several trays) is one segment:
// NCCL 2.20+ treats the GPUs of a multi-node NVLink domain (MNNVL, one NVLink "clique") as one node, so
// its rings, trees and NVLS run over NVLink without the NICs (NCCL's multi-node NVLink support:
// `comm->MNNVL` and the NVLink `clique` of src/include/comm.h; src/graph/paths.cc ncclTopoCheckP2p treats
// two ranks of one clique as peers on one node).
std::vector<std::vector<int>> node_segments(const Cluster& cluster, const std::vector<int>& ranks);
// Whether the group is one node as NCCL sees it: every rank on one node, or inside one rack-scale
// NVLink domain (node_segments would give one segment).
bool within_one_node(const Cluster& cluster, const std::vector<int>& ranks);

}  // namespace clustersim
