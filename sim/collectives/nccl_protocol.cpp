// NCCL's protocols and latency model. Every figure is NCCL's own, from src/graph/tuning.cc of NCCL
// 2.27.7 (github.com/NVIDIA/nccl, tag v2.27.7-1; Apache-2.0 / BSD-3-Clause), in microseconds:
//
//   baseLat[algorithm][protocol]           LL     LL128  Simple
//     Tree                                 6.8    14.0   8.4
//     Ring                                 6.6    14.0   8.4
//     CollNetDirect, NVLS, NVLSTree        0      0      0
//   hwLat[hardware][algorithm][protocol]
//     NVLink  Tree                         0.6    1.25   4.0
//             Ring                         0.6    1.9    3.4
//             CollNetDirect                -      -      3.7
//             NVLS, NVLSTree               -      -      25
//     PCI     Tree                         1.0    1.9    4.0
//             Ring                         1.0    2.5    5.7
//             CollNetDirect                -      -      3.7
//     NET     Tree                         5.0    8.5    14
//             Ring                         2.7    4.0    14.0
//             CollNetDirect                -      -      31
//             NVLS                         -      -      18
//             NVLSTree                     -      -      14
//   PAT (all-gather, reduce-scatter, one GPU per node): 8 + log2(nodes) x interLat / 3.5 + 2.8 x ranks.
// Earlier releases differ in two cells: 2.19-2.22 charge the tree's Simple steps 28 us on NVLink and
// no Tree/Simple base latency, and 2.19 charges NVLS 23 us. 2.28 onwards (tuning.cc's
// ncclTunerConstantsDefaults) raise the network NVLSTree step to 20.9 us.
//
// The step counts are ncclTopoTuneModel's: a ring all-reduce over N ranks on M nodes pays
// (2(N-1) - 2(M-1)) intra-node steps and 2(M-1) network steps (all-gather, reduce-scatter: N-1 and
// M-1); a tree all-reduce 2 ((N/M - 1) intra + log2(M) network); CollNetDirect 2 min(1, N/M - 1)
// intra + 0.4 us x (N/M - 1) + 1 network; NVLS one intra (+ one network step across nodes); NVLSTree
// one intra + 2 log2(M) network. With one GPU per node NCCL charges every network step the tree's
// network latency, plus the network plugin's declared latency (latencyInter; once more under Simple,
// "flush extra latency"). Broadcast and reduce rings are charged (N-1) steps, as the chain clustersim plans.
#include "sim/collectives/nccl_protocol.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace clustersim {
namespace {

constexpr NcclProtocolEntry kProtocols[] = {
    {NcclProtocol::ll, "LL", 0.5, "8-byte stores of 4 data bytes + a 4-byte flag: lowest latency, half bandwidth"},
    {NcclProtocol::ll128, "LL128", 120.0 / 128.0,
     "128-byte lines of 120 data bytes + an 8-byte flag: low latency, 120/128 of the bandwidth"},
    {NcclProtocol::simple, "Simple", 1.0, "bulk copies, a fence and a flag per chunk: full bandwidth, most latency"},
};

// One algorithm's rows of NCCL's tables (us), indexed [protocol] and [hardware][protocol].
struct LatencyRow {
  std::string_view algorithm;
  std::array<double, 3> base_us;
  std::array<std::array<double, 3>, 3> hw_us;  // NVLink, PCI, NET
};

constexpr LatencyRow kRows[] = {
    {"tree", {6.8, 14.0, 8.4}, {{{0.6, 1.25, 4.0}, {1.0, 1.9, 4.0}, {5.0, 8.5, 14.0}}}},
    {"ring", {6.6, 14.0, 8.4}, {{{0.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}}}},
    {"sharp", {0.0, 0.0, 0.0}, {{{0.0, 0.0, 3.7}, {0.0, 0.0, 3.7}, {0.0, 0.0, 31.0}}}},  // CollNetDirect
    {"nvls", {0.0, 0.0, 0.0}, {{{0.0, 0.0, 25.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 18.0}}}},
    {"nvls_tree", {0.0, 0.0, 0.0}, {{{0.0, 0.0, 25.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 14.0}}}},
    {"pat", {0.0, 0.0, 0.0}, {{{0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}}}},  // its own formula
};
constexpr double kPatBaseUs = 8.0;       // "Base time"
constexpr double kPatPerRankUs = 2.8;    // "Still a linear part"
constexpr double kPatLogDivisor = 3.5;   // log2(nodes) x interLat / 3.5
constexpr double kCollNetArityUs = 0.4;  // "arity serialization latency" per local rank

// NCCL's bandwidth model of the low-latency protocols (tuning.cc, NCCL 2.27.7):
//   ring LL      busBw = min(llMaxBw, busBw x .5)
//   ring LL128   busBw x 0.92 ("0.92 /*120.0/128.0*/"; capped at nChannels x perChMaxRingLL128Bw, 36.7 GB/s
//                per channel on Hopper: nccl_channels.hpp, applied by the selector with the channels by size)
//   tree LL      busBw x 1/3.8, capped at llMaxBw
//   tree LL128   busBw x 7/9 on one node, x 120/128 across nodes
// llMaxBw (GB/s of bus bandwidth): on one node by GPU generation, Volta 39.0, Ampere 87.7, Hopper 141.0,
// Blackwell 282.0; across nodes by CPU vendor and node count (Intel: 39.0 on 2 nodes, 20.4 beyond;
// AMD: 22.5 and 19.0). The spec does not name the CPU: clustersim takes Intel's row.
constexpr double kRingLlShare = 0.5;
constexpr double kRingLl128Share = 0.92;
constexpr double kTreeLlShare = 1.0 / 3.8;
constexpr double kTreeLl128ShareOneNode = 7.0 / 9.0;
constexpr double kTreeLl128ShareNodes = 120.0 / 128.0;

// treeCorrectionFactor of tuning.cc (v2.27.7-1), rows LL, LL128, Simple; column i: nBytes in [2^i, 2^(i+1))
// x 64 B. NCCL applies it to the tree all-reduce's bandwidth in ncclTopoGetAlgoTime, the estimate its
// tuner chooses by; clustersim applies it there too (the selector's estimate of the tree), not to the
// tree's run, whose plan stays the physical one.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

double ll_max_bus_bandwidth_Bps(const NcclBandwidthInput& in) {
  if (in.nodes > 1) return (in.nodes == 2 ? 39.0 : 20.4) * 1e9;
  const std::string_view g = in.scale_up_generation;
  if (g == "nvlink2") return 39.0e9;
  if (g == "nvlink4") return 141.0e9;
  if (g == "nvlink5") return 282.0e9;
  return 87.7e9;  // nvlink3 (Ampere); PCIe nodes: Ampere's row (assumed)
}

const LatencyRow* find_row(std::string_view algorithm) {
  for (const auto& r : kRows)
    if (r.algorithm == algorithm) return &r;
  return nullptr;
}

int log2i(int v) {
  int l = 0;
  while (v > 1) {
    v >>= 1;
    ++l;
  }
  return l;
}

}  // namespace

std::span<const NcclProtocolEntry> nccl_protocols() {
  return kProtocols;
}

const NcclProtocolEntry& nccl_protocol(NcclProtocol p) {
  return kProtocols[static_cast<std::size_t>(p)];
}

bool nccl_models_latency(std::string_view algorithm) {
  return find_row(algorithm) != nullptr;
}

double nccl_latency_s(std::string_view algorithm, NcclProtocol p, const NcclLatencyInput& in) {
  const LatencyRow* row = find_row(algorithm);
  if (row == nullptr || in.ranks <= 1) return 0.0;
  const auto pi = static_cast<std::size_t>(p);
  const int nodes = std::max(1, in.nodes);
  const int ppn = std::max(1, in.ranks / nodes);
  const LatencyRow& tree = *find_row("tree");
  const double intra = row->hw_us[static_cast<std::size_t>(in.intra)][pi] * in.intra_scale;
  // With one GPU per node NCCL charges the network steps the tree's latency ("fully exposed").
  // The plugin's declared latency is added to each network step, twice under Simple (the flush).
  // LL and LL128 take the plugin's low-latency network step instead (net_latency_ll_s).
  const double plugin_s = p == NcclProtocol::simple ? 2.0 * in.net_latency_s : in.net_latency_ll_s;
  const double inter = (ppn == 1 ? tree : *row).hw_us[static_cast<std::size_t>(NcclHardware::net)][pi] + plugin_s * 1e6;
  double us = row->base_us[pi] * in.intra_scale;
  const bool gather_or_scatter = in.kind == CollectiveKind::all_gather || in.kind == CollectiveKind::reduce_scatter;
  if (algorithm == "ring") {
    int steps = 0, net_steps = 0;
    if (in.kind == CollectiveKind::all_reduce) {
      steps = 2 * (in.ranks - 1);
      net_steps = nodes == 1 ? 0 : 2 * (nodes - 1);
    } else if (gather_or_scatter) {
      steps = in.ranks - 1;
      net_steps = nodes - 1;
    } else {  // broadcast, reduce: the chain's hops, network ones at the network's latency
      steps = in.ranks - 1;
      net_steps = nodes - 1;
    }
    us += (steps - net_steps) * intra + net_steps * inter;
  } else if (algorithm == "tree") {
    us += 2.0 * ((ppn - 1) * intra + log2i(nodes) * inter);
  } else if (algorithm == "sharp") {
    us += 2.0 * (std::min(1, ppn - 1) * intra + (ppn - 1) * kCollNetArityUs) + inter;
  } else if (algorithm == "nvls") {
    us = intra + (nodes > 1 ? inter : 0.0);
  } else if (algorithm == "nvls_tree") {
    us += intra + 2.0 * log2i(nodes) * inter;
  } else if (algorithm == "pat") {
    us = kPatBaseUs + log2i(nodes) * (inter / kPatLogDivisor) + kPatPerRankUs * in.ranks;
  }
  return us * 1e-6;
}

double nccl_tree_correction(NcclProtocol p, double bytes) {
  if (!(bytes >= 64.0)) return 1.0;
  // log2i(nBytes >> 6), as ncclTopoGetAlgoTime indexes it.
  const auto chunks = static_cast<unsigned long long>(std::min(bytes, 1e18)) >> 6;
  int log_size = 0;
  for (unsigned long long v = chunks; v > 1; v >>= 1)
    ++log_size;
  if (log_size >= 23) return 1.0;
  return kTreeCorrection[static_cast<std::size_t>(p)][static_cast<std::size_t>(log_size)];
}

double nccl_bandwidth_slowdown(std::string_view algorithm, NcclProtocol p, const NcclBandwidthInput& in) {
  if (algorithm != "ring" && algorithm != "tree") return 1.0;
  const bool ring = algorithm == "ring";
  const double correction = 1.0;
  if (p == NcclProtocol::simple) return correction;
  if (p == NcclProtocol::ll128)
    return correction / (ring ? kRingLl128Share : in.nodes == 1 ? kTreeLl128ShareOneNode : kTreeLl128ShareNodes);
  // LL: the protocol's share, or the cap where the capped bus bandwidth is lower.
  const double share = ring ? kRingLlShare : kTreeLlShare;
  const double capped =
      in.simple_bus_bandwidth_Bps > 0.0 ? in.simple_bus_bandwidth_Bps / ll_max_bus_bandwidth_Bps(in) : 0.0;
  return correction * std::max(1.0 / share, capped);
}

}  // namespace clustersim
