#pragma once
// Collective algorithms and their registry.
//
// The replay engine asks for an algorithm by name, or for "auto": the selector estimates, like NCCL's
// tuner, the time of every algorithm that can run the request on an idle fabric and takes the
// fastest. Asking by name for an algorithm that cannot run a request is an error that says why,
// never a silent fallback.
//
// The selector's estimate of an algorithm is its idle-fabric time (below) with the bandwidth part
// divided by the algorithm's tuner bandwidth factor. NCCL's tuner (src/graph/tuning.cc, 2.18-2.21)
// gives its double binary tree the ring's bus bandwidth x 0.92 (`busBw * .92`) and converts it to
// algorithm bandwidth with 1/2 where the ring uses N/(2(N-1)): the tuner never credits the tree with
// moving fewer bytes per port than the ring (it physically does on 2 nodes, where the tree's one
// inter-node edge carries S per direction against the ring's 2(N-1)/N S), so the ring wins every
// size the tree does not win by latency. The selector rates the tree that way: its bandwidth part is
// the ring's x N/(N-1) / 0.92; the simulation then runs the chosen plan as it is.
//
// Protocols: with a profile whose nccl_protocols is set (the shipped nccl-* profiles), each algorithm
// is rated under every NCCL protocol it may run (nccl_protocol.hpp: LL, LL128, Simple; NVLS, NVLS_TREE
// and SHARP run Simple only; LL128 needs NVLink inside the node): the protocol's bandwidth fraction
// divides the bandwidth part, NCCL's latency table (baseLat + steps x hwLat) adds to the latency part,
// and the least estimate wins, over (algorithm, protocol) pairs as NCCL's tuner does. An algorithm
// asked for by name still gets its best protocol. The plan records the protocol (CollectivePlan).
// The consequence, as in NCCL's model: a ring pays 2(N-1) steps of latency, a tree 2 log2(nodes);
// across 2-4 nodes the ring wins at every size the tree does not win by latency, while across
// hundreds of nodes the ring's steps cost milliseconds and the tree wins up to gigabytes (NCCL's own
// tables: crossover near 5 GB at 256 H100 GPUs, tens of GB at 2,048).
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collectives/collective_plan.hpp"

namespace clustersim {

class Cluster;

using CollectivePlanner = CollectivePlan (*)(const CollectiveContext& ctx, const CollectiveRequest& request);
// The kinds of collective an algorithm implements (a set).
class CollectiveKinds {
 public:
  constexpr CollectiveKinds(std::initializer_list<CollectiveKind> kinds) {
    for (const CollectiveKind k : kinds)
      bits_ |= bit(k);
  }
  constexpr bool contains(CollectiveKind k) const { return (bits_ & bit(k)) != 0; }

 private:
  static constexpr std::uint32_t bit(CollectiveKind k) { return std::uint32_t{1} << static_cast<unsigned>(k); }
  std::uint32_t bits_ = 0;
};
// Why this request cannot run (empty when it can): group shape, missing switch features.
using CollectiveFeasibility = std::string (*)(const CollectiveContext& ctx, const CollectiveRequest& request);

struct CollectiveAlgorithmEntry {
  const char* name;
  const char* summary;
  bool nccl;                         // NCCL implements it: "auto" chooses among these only, as NCCL's tuner does
  CollectiveKinds kinds;             // what it implements
  CollectiveFeasibility infeasible;  // nullptr: always feasible for the kinds it supports
  CollectivePlanner plan;
  // What the selector multiplies the plan's bandwidth by (NCCL's tuner's relative rating, see above).
  double tuner_bandwidth_factor = 1.0;
  // NCCL's tuner gives the tree the ring's bus bandwidth (x the factor): its bandwidth part is then
  // rated as the ring's, converted from bus to algorithm bandwidth (x N/(N-1)), when a ring can run.
  bool tuner_rates_like_ring = false;
  // NCCL's rating of the algorithm's bandwidth relative to the ring's (algorithm bandwidth) for a kind
  // and group size, when it is not its own plan's (NVLS all-gather / reduce-scatter): the selector then
  // rates its bandwidth part as the ring's over this (when a ring can run). nullptr, or 0: its own plan.
  double (*tuner_ring_rating)(CollectiveKind kind, int ranks) = nullptr;
};

inline constexpr std::string_view kAutoAlgorithm = "auto";

std::span<const CollectiveAlgorithmEntry> collective_algorithms();
const CollectiveAlgorithmEntry* find_collective_algorithm(std::string_view name);

// Why `name` cannot run `request` (empty when it can; "auto" always can if any algorithm can).
std::string collective_infeasible(std::string_view name, const CollectiveContext& ctx,
                                  const CollectiveRequest& request);
// Plans `request` with the algorithm `name` ("auto" selects). Throws SimulationError naming the
// reason when the algorithm does not exist or cannot run the request.
CollectivePlan plan_collective(std::string_view name, const CollectiveContext& ctx, const CollectiveRequest& request);
// The same with NCCL's protocol `protocol` ("LL", "LL128", "Simple") instead of the best one: what the
// tuner would run had it chosen that pair. Throws SimulationError naming why when the algorithm cannot
// run the request or that protocol (name "auto" is refused: name an algorithm).
CollectivePlan plan_collective(std::string_view name, std::string_view protocol, const CollectiveContext& ctx,
                               const CollectiveRequest& request);
// The protocols `name` may run here, in NCCL's order (Simple only without the profile's nccl_protocols).
std::vector<std::string> collective_protocols(std::string_view name, const CollectiveContext& ctx);
// The feasible NCCL algorithm with the least estimated time for `request` (idle-fabric time with the
// bandwidth part over the entry's tuner_bandwidth_factor); ties keep the registry order.
std::string select_collective_algorithm(const CollectiveContext& ctx, const CollectiveRequest& request);
// Time of `plan` on an idle fabric: per phase, the busiest link's bytes over its effective bandwidth,
// plus the phase latency; plus the profile's per-call latency.
double idle_fabric_time_s(const CollectiveContext& ctx, const CollectivePlan& plan);
// The same, split: the part spent moving bytes (the busiest links) and the latency part.
struct IdleFabricTime {
  double bandwidth_s = 0.0;
  double latency_s = 0.0;
  double total_s() const { return bandwidth_s + latency_s; }
};
IdleFabricTime idle_fabric_time_parts(const CollectiveContext& ctx, const CollectivePlan& plan);
// Its latency part alone (no routing): the per-call latency plus every phase's.
double idle_fabric_latency_s(const CollectiveContext& ctx, const CollectivePlan& plan);

}  // namespace clustersim
