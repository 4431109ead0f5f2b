#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/collectives/deepep_algorithm.hpp"
#include "sim/collectives/deepep_low_latency_algorithm.hpp"
#include "sim/collectives/direct_algorithm.hpp"
#include "sim/collectives/halving_doubling_algorithm.hpp"
#include "sim/collectives/hierarchical_algorithm.hpp"
#include "sim/collectives/nccl_channels.hpp"
#include "sim/collectives/nccl_protocol.hpp"
#include "sim/collectives/pat_algorithm.hpp"
#include "sim/collectives/ring_algorithm.hpp"
#include "sim/collectives/tree_algorithm.hpp"
#include "sim/core/error.hpp"
#include "sim/network/nccl_tests.hpp"
#include "topologies/cluster.hpp"
#include "topologies/fabric_transport.hpp"

namespace clustersim {

namespace {

// The algorithm's plan, named after its entry, with its inter-node transfers striped over the GPUs' NICs
// (collective_plan.hpp).
CollectivePlan plan_with(const CollectiveAlgorithmEntry& a, const CollectiveContext& ctx,
                         const CollectiveRequest& request) {
  CollectivePlan plan = a.plan(ctx, request);
  plan.algorithm = a.name;
  for (CollectivePhase& phase : plan.phases)
    stripe_over_nics(ctx.cluster, phase.transfers);
  return plan;
}

// NCCL src/graph/tuning.cc (2.18-2.21, ncclTopoTuneModel): `if (a == NCCL_ALGO_TREE) busBw =
// std::min(busBw*.92, nChannels*perChMaxTreeBw)`; 2.8 used .9. The per-channel cap (H100: 36-41 GB/s,
// A100: 18-24 GB/s) does not bind on DGX systems, whose channels carry 12-25 GB/s each.
constexpr double kTreeTunerBandwidthFactor = 0.92;
// tuning.cc (2.23-2.27): `if (a == NCCL_ALGO_PAT) busBw *= .75;`.
constexpr double kPatTunerBandwidthFactor = 0.75;

// The protocols NCCL may run `a` with here, in NCCL's order (LL, LL128, Simple). Without the
// profile's NCCL protocols: Simple only. NVLS, NVLS_TREE and CollNet run Simple only (tuning.cc skips
// the other protocols for NVLS and NVLSTree and gives CollNet's zero bandwidth); clustersim's direct
// (point-to-point) plans are Simple. LL128 needs NVLink inside the node (tuning.cc: `pEnable &=
// (graphs[a]->typeIntra <= PATH_NVB)`). LL and LL128 also need the network to deliver 8- and 128-byte
// writes in order: InfiniBand and RoCE do, and so does EFA on p5 (aws-ofi-nccl v1.16.3 asks the EFA
// endpoint for in-order aligned 128-byte writes and sets NCCL_PROTO=simple only where it is refused,
// as on p4d/p4de; its own p5 tuner picks Tree/LL128 for 2-node all-reduces up to 30 MiB,
// src/tuner/nccl_ofi_regions.cpp).
std::vector<NcclProtocol> protocols_for(const CollectiveAlgorithmEntry& a, const CollectiveContext& ctx) {
  const std::string_view name = a.name;
  if (!ctx.profile.nccl_protocols || (name != "ring" && name != "tree")) return {NcclProtocol::simple};
  const ClusterSpec& spec = ctx.cluster.spec();
  if (spec.node.scale_up.type == "pcie") return {NcclProtocol::ll, NcclProtocol::simple};
  // RCCL enables LL128 by default on gfx90a (MI200) only (ROCm/rccl develop at 0cbce2a, src/graph/tuning.cc:
  // "Enable LL128 by default only on gfx90a with available tuning table"): an xGMI-mesh node (MI300X
  // onwards) runs LL and Simple.
  if (spec.node.scale_up.type == "xgmi_mesh") return {NcclProtocol::ll, NcclProtocol::simple};
  return {NcclProtocol::ll, NcclProtocol::ll128, NcclProtocol::simple};
}

// The library a node runs its collectives on: RCCL on AMD Instinct nodes (xGMI mesh), NCCL elsewhere.
const NcclLibraryConstants& nccl_library_of(const CollectiveContext& ctx) {
  return nccl_library(ctx.cluster.spec().node.scale_up.type == "xgmi_mesh" ? NcclLibrary::rccl : NcclLibrary::nccl);
}

// NCCL's modelled latency of `a` under `p` for `request` (nccl_protocol.hpp), added to the plan's own
// (wire, per-step and per-call) latencies, the intra-node part scaled by the profile's fitted
// nccl_intra_latency_scale. The tuner rates with the same latencies the call then takes. NVLS and SHARP
// plans already pay the profile's fitted in-switch latency, NCCL's 25 us NVLink step: they get nothing more, and
// NVLS_TREE only its network steps.
double protocol_latency_s(const CollectiveAlgorithmEntry& a, NcclProtocol p, const CollectiveContext& ctx,
                          const CollectiveRequest& request) {
  const std::string_view name = a.name;
  if (!ctx.profile.nccl_protocols || name == "nvls" || name == "sharp" || !nccl_models_latency(name)) return 0.0;
  // PAT's formula is its whole latency in NCCL's model; its plan's steps already pay their hops.
  NcclLatencyInput in;
  in.kind = request.kind;
  in.ranks = static_cast<int>(request.ranks->size());
  in.nodes = static_cast<int>(node_segments(ctx.cluster, *request.ranks).size());
  in.intra = ctx.cluster.spec().node.scale_up.type == "pcie" ? NcclHardware::pci : NcclHardware::nvlink;
  in.intra_scale = ctx.profile.nccl_intra_latency_scale.value;
  if (in.nodes > 1)
    if (const FabricTransport* t = find_fabric_transport(ctx.cluster.spec().fabric.transport_in_effect())) {
      in.net_latency_s = t->nccl_latency_us * 1e-6;
      in.net_latency_ll_s = t->nccl_ll_latency_us * 1e-6;
    }
  double s = nccl_latency_s(name, p, in);
  if (name == "nvls_tree")
    s -= nccl_latency_s("nvls", p, {request.kind, in.ranks, 1, in.intra, 0.0, 0.0, in.intra_scale});
  return s;
}

// How many times longer the bytes of `a` take under `p` than under Simple (NCCL's bandwidth model,
// nccl_protocol.hpp), given the Simple plan's bandwidth part (LL's cap is on bus bandwidth).
double protocol_slowdown(const CollectiveAlgorithmEntry& a, NcclProtocol p, const CollectiveContext& ctx,
                         const CollectiveRequest& request, double simple_bandwidth_s) {
  if (!ctx.profile.nccl_protocols) return 1.0;
  const int n = static_cast<int>(request.ranks->size());
  NcclBandwidthInput in;
  in.nodes = static_cast<int>(node_segments(ctx.cluster, *request.ranks).size());
  in.scale_up_generation = ctx.cluster.spec().node.scale_up.generation;
  if (simple_bandwidth_s > 0.0)
    in.simple_bus_bandwidth_Bps = bus_factor(request.kind, n) * request.bytes / simple_bandwidth_s;
  const double slowdown = nccl_bandwidth_slowdown(a.name, p, in);
  // NCCL's per-channel cap (nccl_channels.hpp): the bus bandwidth under p is at most the call's channels
  // (by its size) x the per-channel maximum, whatever the links allow.
  const double cap_per_channel_Bps =
      nccl_per_channel_cap_Bps(a.name, p, request.kind, in.scale_up_generation, in.nodes);
  if (!(cap_per_channel_Bps > 0.0) || !(in.simple_bus_bandwidth_Bps > 0.0)) return slowdown;
  const NcclLibraryConstants& lib = nccl_library_of(ctx);
  const int channels =
      nccl_channels_for_size(lib, std::string_view(a.name) == "ring", p, request.bytes, n, lib.max_channels);
  return std::max(slowdown, in.simple_bus_bandwidth_Bps / (channels * cap_per_channel_Bps));
}

// The ring's pipeline fill under `p` (nccl_channels.hpp): its first chunk crossing the ring's N-1 hops at
// the rate a rank sends (its bytes over the plan's bandwidth part under p). 0 for other algorithms and
// without the profile's NCCL protocols.
double ring_fill_s(const CollectiveAlgorithmEntry& a, NcclProtocol p, const CollectiveContext& ctx,
                   const CollectiveRequest& request, double simple_bandwidth_s, double slowdown) {
  if (!ctx.profile.nccl_protocols || std::string_view(a.name) != "ring" || !(simple_bandwidth_s > 0.0)) return 0.0;
  const int n = static_cast<int>(request.ranks->size());
  const double rank_rate_Bps = bus_factor(request.kind, n) * request.bytes / (simple_bandwidth_s * slowdown);
  return ring_pipeline_fill_s(nccl_library_of(ctx), p, request.kind, n, request.bytes, rank_rate_Bps);
}

// `plan` (Simple) run with protocol `p`: its bytes on the wire take `slowdown` times longer (each
// carries 1/slowdown payload bytes), and the last phase pays NCCL's latency of the protocol.
void apply_protocol(CollectivePlan& plan, NcclProtocol p, double latency_s, double slowdown) {
  plan.protocol = std::string(nccl_protocol(p).name);
  if (plan.phases.empty()) return;
  for (CollectivePhase& phase : plan.phases)
    for (Transfer& t : phase.transfers)
      t.bytes *= slowdown;
  plan.phases.back().latency_s += latency_s;
}

// An algorithm's plan with its best protocol, and the tuner's estimate of its time.
struct Candidate {
  CollectivePlan plan;
  double estimate = std::numeric_limits<double>::infinity();
};

// Plans `a` and rates it under every protocol it may run (the estimate: idle-fabric latency plus NCCL's
// latency of the protocol plus the bandwidth part x the protocol's slowdown over the entry's tuner
// factor; a tree is rated
// with the ring's bandwidth when `ring_bandwidth_s` holds it). Keeps the protocol with the least
// estimate (ties: NCCL's order). A ring stores its bandwidth part in `ring_bandwidth_s`.
Candidate best_protocol(const CollectiveAlgorithmEntry& a, const CollectiveContext& ctx,
                        const CollectiveRequest& request, std::optional<double>& ring_bandwidth_s) {
  const double n = static_cast<double>(request.ranks->size());
  Candidate c;
  c.plan = plan_with(a, ctx, request);
  double latency_s = 0.0, bandwidth_s = 0.0;
  const double rating = a.tuner_ring_rating != nullptr ? a.tuner_ring_rating(request.kind, static_cast<int>(n)) : 0.0;
  if (rating > 0.0 && ring_bandwidth_s) {
    // Rated as NCCL's tuner rates it against the ring (the entry's tuner_ring_rating).
    latency_s = idle_fabric_latency_s(ctx, c.plan);
    bandwidth_s = *ring_bandwidth_s / rating;
  } else if (a.tuner_rates_like_ring && ring_bandwidth_s && n > 1) {
    // Rated with the ring's bandwidth: only its latency is needed, no routing.
    latency_s = idle_fabric_latency_s(ctx, c.plan);
    bandwidth_s = *ring_bandwidth_s * n / (n - 1);
  } else {
    const IdleFabricTime t = idle_fabric_time_parts(ctx, c.plan);
    if (std::string_view(a.name) == "ring") ring_bandwidth_s = t.bandwidth_s;
    latency_s = t.latency_s;
    bandwidth_s = t.bandwidth_s;
  }
  NcclProtocol best = NcclProtocol::simple;
  double best_latency_s = 0.0, best_slowdown = 1.0;
  for (NcclProtocol p : protocols_for(a, ctx)) {
    const double slowdown = protocol_slowdown(a, p, ctx, request, bandwidth_s);
    const double extra_s = protocol_latency_s(a, p, ctx, request);
    // NCCL's tuner also corrects a tree all-reduce's bandwidth by size (nccl_tree_correction): the estimate
    // only, the run keeps its plan.
    const double correction =
        ctx.profile.nccl_protocols && std::string_view(a.name) == "tree" && request.kind == CollectiveKind::all_reduce
            ? nccl_tree_correction(p, request.bytes)
            : 1.0;
    const double estimate = latency_s + extra_s + bandwidth_s * slowdown / (a.tuner_bandwidth_factor * correction);
    if (estimate < c.estimate) {
      c.estimate = estimate;
      best = p;
      best_latency_s = extra_s;
      best_slowdown = slowdown;
    }
  }
  // The ring's pipeline fill is paid by the run, not rated: NCCL's tuner does not model it (its estimate is
  // latency + size / bandwidth, tuning.cc ncclTopoGetAlgoTime), so it does not change NCCL's choice.
  best_latency_s += ring_fill_s(a, best, ctx, request, bandwidth_s, best_slowdown);
  apply_protocol(c.plan, best, best_latency_s, best_slowdown);
  return c;
}

// Plans `request` with every feasible NCCL algorithm; returns the one with the least estimated time.
std::pair<const CollectiveAlgorithmEntry*, CollectivePlan> select_and_plan(const CollectiveContext& ctx,
                                                                           const CollectiveRequest& request) {
  const CollectiveAlgorithmEntry* best = nullptr;
  CollectivePlan best_plan;
  double best_time = std::numeric_limits<double>::infinity();
  std::optional<double> ring_bandwidth_s;  // the registry lists the ring first
  for (const auto& a : collective_algorithms()) {
    if (!a.nccl || !collective_infeasible(a.name, ctx, request).empty()) continue;
    Candidate c = best_protocol(a, ctx, request, ring_bandwidth_s);
    if (c.estimate < best_time) {  // ties keep the earlier entry (registry order)
      best_time = c.estimate;
      best = &a;
      best_plan = std::move(c.plan);
    }
  }
  if (best == nullptr) throw SimulationError(std::string("no algorithm can run ") + to_string(request.kind));
  return {best, std::move(best_plan)};
}

}  // namespace

std::span<const CollectiveAlgorithmEntry> collective_algorithms() {
  // The kinds each algorithm implements.
  using K = CollectiveKind;
  static constexpr CollectiveKinds kRingKinds{K::all_reduce, K::all_gather, K::reduce_scatter, K::broadcast, K::reduce};
  static constexpr CollectiveKinds kAllReduce{K::all_reduce};
  static constexpr CollectiveKinds kReduceGatherScatter{K::all_reduce, K::all_gather, K::reduce_scatter};
  static constexpr CollectiveKinds kGatherScatter{K::all_gather, K::reduce_scatter};
  static constexpr CollectiveKinds kAllToAll{K::all_to_all};
  static constexpr CollectiveAlgorithmEntry kAlgorithms[] = {
      {"ring", "rings over every rank (rail-aligned channels across nodes): bandwidth-optimal", true, kRingKinds,
       nullptr, &plan_ring},
      {"tree", "NCCL's double binary tree: log-depth latency, 2S per busiest port", true, kAllReduce, nullptr,
       &plan_tree, kTreeTunerBandwidthFactor, true},
      {"nvls",
       "NVLink SHARP: reduction (all-reduce, reduce-scatter) or multicast (all-gather) inside the NVSwitch (one node)",
       true, kReduceGatherScatter, &nvls_infeasible, &plan_nvls, 1.0, false, &nvls_tuner_rating},
      {"sharp",
       "in-network reduction in the InfiniBand switches, pipelined with the intra-node stages (NCCL CollNet; NVLS "
       "inside nodes when available)",
       true, kAllReduce, &sharp_infeasible, &plan_sharp},
      {"nvls_tree",
       "NVLS inside the nodes pipelined with a double binary tree per rail across them (NCCL's NVLS_TREE; no "
       "switch reduction needed)",
       true, kAllReduce, &nvls_tree_infeasible, &plan_nvls_tree},
      {"pat",
       "NCCL's PAT: all-gather / reduce-scatter in log2(N) steps with one GPU per node (NCCL 2.23+; Bruck's "
       "traffic)",
       true, kGatherScatter, &pat_infeasible, &plan_pat, kPatTunerBandwidthFactor},
      {"direct", "every pair at once (all-to-all, all-to-allv)", true, kAllToAll, nullptr, &plan_direct},
      {"deepep",
       "DeepEP's normal MoE dispatch/combine: RDMA along rails between nodes, NVLink forwarding inside them, "
       "pipelined (all-to-all; not NCCL: name it, e.g. --algorithm ep=deepep)",
       false, kAllToAll, &deepep_infeasible, &plan_deepep},
      {"deepep_low_latency",
       "DeepEP's low-latency MoE dispatch/combine: every token copy straight to its expert's GPU (RDMA across "
       "nodes, NVLink inside), no deduplication or forwarding (all-to-all; not NCCL: name it, e.g. --algorithm "
       "ep=deepep_low_latency)",
       false, kAllToAll, nullptr, &plan_deepep_low_latency},
      {"halving_doubling", "recursive halving then doubling (MPI, Gloo): log2(N) steps, power-of-two groups", false,
       kReduceGatherScatter, &halving_doubling_infeasible, &plan_halving_doubling},
      {"hierarchical", "intra-node reduce-scatter, inter-node ring per rail, intra-node all-gather (Horovod)", false,
       kAllReduce, &hierarchical_infeasible, &plan_hierarchical},
  };
  return kAlgorithms;
}

const CollectiveAlgorithmEntry* find_collective_algorithm(std::string_view name) {
  for (const auto& a : collective_algorithms()) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

std::string collective_infeasible(std::string_view name, const CollectiveContext& ctx,
                                  const CollectiveRequest& request) {
  if (name == kAutoAlgorithm) {
    for (const auto& a : collective_algorithms())
      if (a.nccl && collective_infeasible(a.name, ctx, request).empty()) return {};
    return std::string("no algorithm can run ") + to_string(request.kind);
  }
  const CollectiveAlgorithmEntry* a = find_collective_algorithm(name);
  if (a == nullptr) {
    std::string known;
    for (const auto& e : collective_algorithms())
      known += std::string(known.empty() ? "" : ", ") + e.name;
    return "unknown collective algorithm '" + std::string(name) + "' (known: auto, " + known + ")";
  }
  if (!a->kinds.contains(request.kind))
    return "the " + std::string(name) + " algorithm cannot run " + to_string(request.kind);
  if (request.matrix != nullptr && request.kind != CollectiveKind::all_to_all)
    return "per-pair sizes are only meaningful for all_to_all";
  if (a->infeasible != nullptr) {
    std::string why = a->infeasible(ctx, request);
    if (!why.empty())
      return "the " + std::string(name) + " algorithm cannot run this " + to_string(request.kind) + ": " + why;
  }
  return {};
}

double idle_fabric_latency_s(const CollectiveContext& ctx, const CollectivePlan& plan) {
  double latency_s = ctx.profile.collective_latency_s.value;
  for (const auto& phase : plan.phases)
    latency_s += phase.latency_s;
  return latency_s;
}

IdleFabricTime idle_fabric_time_parts(const CollectiveContext& ctx, const CollectivePlan& plan) {
  const auto links = ctx.cluster.links();
  // Bytes per link, and transfers of the phase routed so far per link: adaptive routing
  // (fabric.routing) spreads the phase's transfers over equal-cost links as the backends do when the
  // phase starts on an idle fabric. Both all zero on entry and on exit (only the links a phase touched
  // are cleared), so that a lent scratch is reused without clearing every link.
  LinkLoadScratch own;
  LinkLoadScratch& scratch = ctx.scratch != nullptr ? *ctx.scratch : own;
  if (scratch.bytes.size() != links.size()) {
    scratch.bytes.assign(links.size(), 0.0);
    scratch.in_flight.assign(links.size(), 0);
  }
  std::vector<double>& load = scratch.bytes;
  std::vector<int>& in_flight = scratch.in_flight;
  std::vector<int> touched, route;
  const auto clear_touched = [&] {
    for (int l : touched) {
      load[static_cast<std::size_t>(l)] = 0.0;
      in_flight[static_cast<std::size_t>(l)] = 0;
    }
    touched.clear();
  };
  IdleFabricTime t;
  t.latency_s = idle_fabric_latency_s(ctx, plan);
  std::uint64_t flow = 0;
  try {
    for (const auto& phase : plan.phases) {
      for (const Transfer& tr : phase.transfers) {
        route.clear();
        if (tr.src_gpu != tr.dst_gpu && tr.bytes > 0.0)
          ctx.cluster.route(tr.src_gpu, tr.dst_gpu, flow, route, in_flight, tr.lane);
        ++flow;
        for (int l : route) {
          double& b = load[static_cast<std::size_t>(l)];
          if (b == 0.0) touched.push_back(l);
          b += tr.bytes;
          ++in_flight[static_cast<std::size_t>(l)];
        }
      }
      double busiest = 0.0;
      for (int l : touched)
        busiest = std::max(busiest, load[static_cast<std::size_t>(l)] /
                                        ctx.profile.effective_bandwidth_Bps(links[static_cast<std::size_t>(l)]));
      clear_touched();
      t.bandwidth_s += busiest;
    }
  } catch (...) {
    clear_touched();  // a lent scratch stays all zero
    throw;
  }
  return t;
}

double idle_fabric_time_s(const CollectiveContext& ctx, const CollectivePlan& plan) {
  return idle_fabric_time_parts(ctx, plan).total_s();
}

std::string select_collective_algorithm(const CollectiveContext& ctx, const CollectiveRequest& request) {
  return select_and_plan(ctx, request).first->name;
}

CollectivePlan plan_collective(std::string_view name, const CollectiveContext& ctx, const CollectiveRequest& request) {
  if (name == kAutoAlgorithm) return select_and_plan(ctx, request).second;
  const std::string why = collective_infeasible(name, ctx, request);
  if (!why.empty()) throw SimulationError(why);
  const CollectiveAlgorithmEntry& a = *find_collective_algorithm(name);
  if (protocols_for(a, ctx).size() == 1) {  // no choice to rate: no routing
    CollectivePlan plan = plan_with(a, ctx, request);
    const NcclProtocol p = protocols_for(a, ctx).front();
    apply_protocol(plan, p, protocol_latency_s(a, p, ctx, request), 1.0);
    return plan;
  }
  std::optional<double> no_ring_rating;  // a named algorithm is rated on its own plan
  return best_protocol(a, ctx, request, no_ring_rating).plan;
}

CollectivePlan plan_collective(std::string_view name, std::string_view protocol, const CollectiveContext& ctx,
                               const CollectiveRequest& request) {
  if (name == kAutoAlgorithm) throw SimulationError("a protocol is chosen for a named algorithm, not for auto");
  const std::string why = collective_infeasible(name, ctx, request);
  if (!why.empty()) throw SimulationError(why);
  const CollectiveAlgorithmEntry& a = *find_collective_algorithm(name);
  std::string known;
  for (NcclProtocol p : protocols_for(a, ctx)) {
    if (nccl_protocol(p).name == protocol) {
      CollectivePlan plan = plan_with(a, ctx, request);
      const double simple_bandwidth_s =
          ctx.profile.nccl_protocols ? idle_fabric_time_parts(ctx, plan).bandwidth_s : 0.0;
      const double slowdown = protocol_slowdown(a, p, ctx, request, simple_bandwidth_s);
      apply_protocol(
          plan, p,
          protocol_latency_s(a, p, ctx, request) + ring_fill_s(a, p, ctx, request, simple_bandwidth_s, slowdown),
          slowdown);
      return plan;
    }
    known += std::string(known.empty() ? "" : ", ") + std::string(nccl_protocol(p).name);
  }
  throw SimulationError("the " + std::string(name) + " algorithm cannot run the " + std::string(protocol) +
                        " protocol here (it can run: " + known + ")");
}

std::vector<std::string> collective_protocols(std::string_view name, const CollectiveContext& ctx) {
  std::vector<std::string> out;
  if (const CollectiveAlgorithmEntry* a = find_collective_algorithm(name))
    for (NcclProtocol p : protocols_for(*a, ctx))
      out.emplace_back(nccl_protocol(p).name);
  return out;
}

}  // namespace clustersim
