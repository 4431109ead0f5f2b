// Hierarchical all-reduce and in-network reductions.
//
// hierarchical (G GPUs per node, M nodes, rail-aligned):
//   1. intra-node reduce-scatter (a ring over the node's GPUs): (G-1)/G * S per GPU, G-1 steps;
//   2. inter-node all-reduce of each GPU's S/G shard with the same-rail GPUs of the other nodes
//      (G independent rings over M nodes): 2(M-1)/M * S/G per GPU, 2(M-1) steps;
//   3. intra-node all-gather: (G-1)/G * S per GPU, G-1 steps.
//   t = 2 (G-1)/G * S/B_node + 2(M-1)/M * S/(G B_nic) + latencies; the phases run one after another.
//
// nvls (NVLink SHARP, NVSwitch generation 3 onwards): each GPU writes its buffer into the switch,
// which reduces, and reads the result back (multimem loads and stores): S per GPU port in each
// direction instead of the ring's 2(N-1)/N S; one pass, t = S/B + a + the profile's nvls_latency_s
// (paid per in-switch phase: SHARP's NVLS reduce-scatter and all-gather pay it once each). The
// switch is not an endpoint of our flows: a flow GPU i -> GPU i+1 of S bytes loads exactly GPU i's
// uplink and GPU i+1's downlink with S, which is what the in-switch reduction puts on them.
//
// nvls all-gather / reduce-scatter (NCCL 2.19 onwards, one node only: NCCL's tuner gives NVLS no
// bandwidth for them across nodes unless CollNet runs them, src/graph/tuning.cc v2.27.7-1): an
// all-gather multicasts each GPU's S/N shard into the switch once (multimem stores into every GPU's
// NVLS buffer, its own included), so each GPU port receives all N shards, S, and sends S/N; a
// reduce-scatter is its mirror (multimem load-reduce: S up, S/N down per GPU). The busy direction
// carries S, where the ring puts (N-1)/N S on each port: t = S/B_nvls + a + nvls_latency_s, a bus
// bandwidth of (N-1)/N B_nvls. A multicast has no point-to-point equivalent (it receives N times
// what is sent), so the plan's flows i -> i+1 of S put S on both directions of every port: the light
// direction (S/N) is overstated, which only matters to traffic sharing the ports during the call.
//
// nvls_tree (NCCL's NVLS_TREE, NCCL 2.18 onwards, the multi-node all-reduce of NVLS-capable nodes on
// fabrics that do not reduce): as sharp, with the inter-node stage a double binary tree over the nodes
// on every rail (each GPU's S/G shard, the tree of tree_algorithm.cpp over one GPU per node) instead of
// the switches' reduction; pipelined with the in-switch stages. On 2 nodes the tree moves S/G per NIC
// per direction, as SHARP does, so the busiest of NVLS and the NICs sets the pace: a p5 pair (NVLS at
// ~260 GB/s of algorithm bandwidth, 400 GB/s of NICs per node) is bound by NVLS, ~480 GB/s of bus
// bandwidth where a ring is bound by the NICs at 400 (aws-samples nccl-tests on 2 x p5.48xlarge: 487).
//
// sharp (InfiniBand SHARP, aggregation in the switches): like hierarchical, but the inter-node stage
// sends each S/G shard up into the switch tree once and receives the reduced shard once: S/G per NIC
// per direction instead of 2(M-1)/M S/G, 2 steps (up, down). Intra-node stages use NVLS when the
// node's NVSwitch supports it. Both nvls and sharp therefore move half the data of the ring.
// Unlike Horovod's hierarchical all-reduce, NCCL's CollNet and NVLS+SHARP kernels pipeline the three
// stages chunk by chunk (separate warps reduce-scatter, talk to the network and all-gather at once), so
// sharp is one phase: the stages' transfers run together, t = max(intra-node, network) + the stages'
// latencies. With NVLS, the reduce-scatter (multimem load-reduce: S up, S/G down per GPU) and the
// all-gather (multimem store: S/G up, S down) together put on each GPU port what a node's NVLS
// all-reduce puts there, so the intra-node stage is that all-reduce's flows (S per GPU). Checked
// against NVIDIA's published peak bus bandwidth of DGX H100 nodes with SHARP, 480 GB/s (GTC24 S62129,
// calibration/data/published/collectives.json coll-0026): run sequentially, the stages gave 200-210.
#include "sim/collectives/hierarchical_algorithm.hpp"

#include "sim/collectives/ring_algorithm.hpp"
#include "sim/collectives/switch_features.hpp"
#include "sim/collectives/tree_algorithm.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

// Rail-aligned layout: every node segment has the same size G.
std::string uniform_nodes_reason(const CollectiveContext& ctx, const CollectiveRequest& request) {
  const auto segments = node_segments(ctx.cluster, *request.ranks);
  if (segments.size() < 2) return "the group lies inside one node";
  for (const auto& s : segments) {
    if (s.size() != segments.front().size()) return "the group has different numbers of GPUs on different nodes";
  }
  return {};
}

// A ring phase over `ranks` with each rank sending `bytes_per_rank` in `steps` steps.
CollectivePhase ring_phase(const CollectiveContext& ctx, const std::string& name, const std::vector<int>& ranks,
                           double bytes_per_rank, int steps) {
  CollectivePhase p;
  p.name = name;
  p.transfers = ring_hops(ctx.cluster, ranks, 1, bytes_per_rank, true);
  p.steps = steps;
  p.latency_s = steps * max_hop_latency_s(ctx, p.transfers);
  return p;
}

// The in-switch reduction inside each group: flows i -> i+1 of `bytes` (see the file comment). NVLS
// runs at the profile's NVLS efficiency rather than the NVLink one the links are scaled by: its flows
// carry bytes x (NVLink efficiency / NVLS efficiency), the wire time of the reduction.
CollectivePhase switch_phase(const CollectiveContext& ctx, const std::string& name,
                             const std::vector<std::vector<int>>& groups, double bytes, int steps, bool nvls) {
  CollectivePhase p;
  p.name = name;
  if (nvls) {
    bytes *= ctx.profile.of(LinkTechnology::nvlink).bandwidth_efficiency.value / ctx.profile.nvls_efficiency.value;
  }
  for (const auto& g : groups) {
    for (std::size_t i = 0; g.size() > 1 && i < g.size(); ++i)
      p.transfers.push_back({g[i], g[(i + 1) % g.size()], bytes});
  }
  sort_and_merge_transfers(p.transfers);
  p.steps = steps;
  // An NVLS phase also pays the profile's NVLS latency: the multimem reduction and its synchronisation.
  p.latency_s = steps * (max_hop_latency_s(ctx, p.transfers) + (nvls ? ctx.profile.nvls_latency_s.value : 0.0));
  return p;
}

// Rail r of the group: the r-th GPU of every node segment.
std::vector<std::vector<int>> rails(const std::vector<std::vector<int>>& segments) {
  std::vector<std::vector<int>> out(segments.front().size());
  for (const auto& seg : segments)
    for (std::size_t r = 0; r < seg.size(); ++r)
      out[r].push_back(seg[r]);
  return out;
}

bool node_has_nvls(const Cluster& cluster) {
  return has_nvls(cluster.spec());
}

// Why NVLS (alone or under a tree) cannot run on the cluster's nodes (empty when it can).
std::string no_nvls_reason(const Cluster& cluster) {
  if (node_has_nvls(cluster)) return {};
  return "the node's NVSwitch has no in-switch reduction (needs NVSwitch generation 3: scale_up generation nvlink4 "
         "or nvlink5)";
}

// Intra-node reduce-scatter (reduce) or all-gather of S per node: a ring in every node at once.
void add_intra_phases(const CollectiveContext& ctx, const std::vector<std::vector<int>>& segments, double bytes,
                      const std::string& name, CollectivePlan& plan) {
  const double g = static_cast<double>(segments.front().size());
  if (segments.front().size() <= 1) return;
  CollectivePhase merged;
  merged.name = name + " (ring)";
  for (const auto& seg : segments) {
    auto p = ring_phase(ctx, name, seg, (g - 1) / g * bytes, static_cast<int>(g) - 1);
    merged.transfers.insert(merged.transfers.end(), p.transfers.begin(), p.transfers.end());
    merged.steps = p.steps;
    merged.latency_s = std::max(merged.latency_s, p.latency_s);
  }
  plan.phases.push_back(std::move(merged));
}

// SHARP's (or NVLS_TREE's, `tree`) stages as one pipelined phase (see the file comment).
CollectivePlan plan_in_network(const CollectiveContext& ctx, const CollectiveRequest& request, bool tree) {
  CollectivePlan plan;
  const auto segments = node_segments(ctx.cluster, *request.ranks);
  const double g = static_cast<double>(segments.front().size());
  const bool nvls = node_has_nvls(ctx.cluster);
  CollectivePlan stages;
  if (nvls && segments.front().size() > 1) {
    // Reduce-scatter and all-gather in the switch: a node's NVLS all-reduce on the ports; each of the
    // two in-switch stages (steps) pays its latency.
    stages.phases.push_back(
        switch_phase(ctx, "intra-node reduce-scatter + all-gather (NVLS)", segments, request.bytes, 2, true));
  } else {
    add_intra_phases(ctx, segments, request.bytes, "intra-node reduce-scatter", stages);
    add_intra_phases(ctx, segments, request.bytes, "intra-node all-gather", stages);
  }
  if (tree) {
    // A double binary tree over the nodes on every rail, each carrying that rail's S/G shard.
    CollectivePhase trees;
    for (const auto& rail : rails(segments)) {
      const CollectiveRequest shard{CollectiveKind::all_reduce, &rail, request.bytes / g};
      for (CollectivePhase& p : plan_tree(ctx, shard).phases) {
        trees.transfers.insert(trees.transfers.end(), p.transfers.begin(), p.transfers.end());
        trees.steps = std::max(trees.steps, p.steps);
        trees.latency_s = std::max(trees.latency_s, p.latency_s);
      }
    }
    stages.phases.push_back(std::move(trees));
  } else {
    stages.phases.push_back(
        switch_phase(ctx, "inter-node all-reduce (SHARP)", rails(segments), request.bytes / g, 2, false));
  }
  CollectivePhase pipelined;
  const std::string network = tree ? "tree all-reduce" : "SHARP all-reduce";
  pipelined.name = nvls ? "NVLS reduce-scatter | " + network + " | NVLS all-gather (pipelined)"
                        : "reduce-scatter | " + network + " | all-gather (pipelined)";
  for (CollectivePhase& stage : stages.phases) {
    pipelined.transfers.insert(pipelined.transfers.end(), stage.transfers.begin(), stage.transfers.end());
    pipelined.steps += stage.steps;
    pipelined.latency_s += stage.latency_s;
  }
  sort_and_merge_transfers(pipelined.transfers);
  for (Transfer& t : pipelined.transfers)  // a steady state: at flow fidelity, units that end together
    t.pipelined = true;
  plan.phases.push_back(std::move(pipelined));
  plan.channels = static_cast<int>(g);
  return plan;
}

}  // namespace

// NCCL's tuner (src/graph/tuning.cc, v2.27.7-1) rates NVLS all-gather / reduce-scatter at
// nChannels x bwIntra x (ppn-1)/ppn of algorithm bandwidth, the ring at nChannels x bwIntra x N/(N-1).
// The NVLS graph has one channel per GPU and its head takes two shares of every port
// (ncclTopoSearchTryNvls, src/graph/search.cc): bwIntra = B/(N+1), N channels, N B/(N+1) in all,
// where the ring's channels fill the port (B). Relative to the ring, NVLS is rated at
//     N/(N+1) x ((N-1)/N)^2 = (N-1)^2 / (N (N+1))     (8 GPUs: 49/72 = 0.68).
// All-reduce: 0, rated on its own plan (the in-switch reduction halves the bytes, as NCCL's rating does).
double nvls_tuner_rating(CollectiveKind kind, int n) {
  if (kind != CollectiveKind::all_gather && kind != CollectiveKind::reduce_scatter) return 0.0;
  const double ranks = n;
  return (ranks - 1) * (ranks - 1) / (ranks * (ranks + 1));
}

std::string hierarchical_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request) {
  return uniform_nodes_reason(ctx, request);
}

CollectivePlan plan_hierarchical(const CollectiveContext& ctx, const CollectiveRequest& request) {
  CollectivePlan plan;
  const auto segments = node_segments(ctx.cluster, *request.ranks);
  const double g = static_cast<double>(segments.front().size());
  const double m = static_cast<double>(segments.size());
  add_intra_phases(ctx, segments, request.bytes, "intra-node reduce-scatter", plan);
  const double shard = request.bytes / g;
  CollectivePhase inter;
  inter.name = "inter-node all-reduce (ring per rail)";
  for (const auto& rail : rails(segments)) {
    auto p = ring_phase(ctx, inter.name, rail, 2 * (m - 1) / m * shard, 2 * (static_cast<int>(m) - 1));
    inter.transfers.insert(inter.transfers.end(), p.transfers.begin(), p.transfers.end());
    inter.steps = p.steps;
    inter.latency_s = std::max(inter.latency_s, p.latency_s);
  }
  plan.phases.push_back(std::move(inter));
  add_intra_phases(ctx, segments, request.bytes, "intra-node all-gather", plan);
  plan.channels = static_cast<int>(g);
  return plan;
}

std::string sharp_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request) {
  if (!has_sharp(ctx.cluster.spec())) return "the fabric's switches do not reduce in the network (no SHARP)";
  return uniform_nodes_reason(ctx, request);
}

CollectivePlan plan_sharp(const CollectiveContext& ctx, const CollectiveRequest& request) {
  return plan_in_network(ctx, request, false);
}

std::string nvls_tree_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request) {
  if (std::string reason = no_nvls_reason(ctx.cluster); !reason.empty()) return reason;
  if (std::string reason = uniform_nodes_reason(ctx, request); !reason.empty()) return reason;
  if (node_segments(ctx.cluster, *request.ranks).front().size() < 2)
    return "NVLS_TREE needs at least 2 GPUs of each node in the group";
  return {};
}

CollectivePlan plan_nvls_tree(const CollectiveContext& ctx, const CollectiveRequest& request) {
  return plan_in_network(ctx, request, true);
}

std::string nvls_infeasible(const CollectiveContext& ctx, const CollectiveRequest& request) {
  if (std::string reason = no_nvls_reason(ctx.cluster); !reason.empty()) return reason;
  if (request.ranks->empty() || !within_one_node(ctx.cluster, *request.ranks))
    return request.kind == CollectiveKind::all_reduce
               ? "NVLS reduces inside one NVSwitch domain"
               : "NVLS runs all-gather and reduce-scatter inside one NVSwitch domain (NCCL runs them across nodes "
                 "only with CollNet)";
  return {};
}

CollectivePlan plan_nvls(const CollectiveContext& ctx, const CollectiveRequest& request) {
  CollectivePlan plan;
  if (request.ranks->size() <= 1 || request.bytes <= 0.0) return plan;
  const char* name = request.kind == CollectiveKind::all_gather       ? "in-switch multicast (all-gather)"
                     : request.kind == CollectiveKind::reduce_scatter ? "in-switch load-reduce (reduce-scatter)"
                                                                      : "in-switch reduce + multicast";
  plan.phases.push_back(switch_phase(ctx, name, {*request.ranks}, request.bytes, 1, true));
  return plan;
}

}  // namespace clustersim
