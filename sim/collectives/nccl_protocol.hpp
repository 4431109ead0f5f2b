#pragma once
// NCCL's three wire protocols (LL, LL128, Simple) and NCCL's latency model of each algorithm x
// protocol, the figures NCCL's tuner uses to choose them (src/graph/tuning.cc, NCCL 2.27.7).
//
// A protocol is a way of signalling that data has arrived:
//   LL      every 8-byte store carries 4 bytes of data and a 4-byte flag, so the receiver polls the
//           data itself: the lowest latency, half the link bandwidth.
//   LL128   every 128-byte line carries 120 bytes of data and an 8-byte flag (needs 128-byte
//           stores delivered in order: NVLink; networks that guarantee it): 120/128 of the bandwidth.
//   Simple  bulk copies with a memory fence and a flag per chunk: the full bandwidth, the highest
//           latency per step.
// A collective's time under protocol p is its Simple plan with every byte on the wire x
// 1/bandwidth_fraction(p) plus NCCL's modelled latency of (algorithm, p) (nccl_latency_s below).
#include <span>
#include <string_view>
#include <vector>

#include "workloads/execution_graph.hpp"

namespace clustersim {

enum class NcclProtocol { ll, ll128, simple };

struct NcclProtocolEntry {
  NcclProtocol id;
  std::string_view name;      // as NCCL_PROTO spells it: "LL", "LL128", "Simple"
  double bandwidth_fraction;  // payload bytes per byte on the wire
  std::string_view summary;
};

// LL, LL128, Simple (NCCL's order: the tuner keeps the first of equal times).
std::span<const NcclProtocolEntry> nccl_protocols();
const NcclProtocolEntry& nccl_protocol(NcclProtocol p);

// The hardware a step crosses, as NCCL's latency table is indexed.
enum class NcclHardware { nvlink, pci, net };

// What NCCL's latency model needs to know of a call.
struct NcclLatencyInput {
  CollectiveKind kind = CollectiveKind::all_reduce;
  int ranks = 1;
  int nodes = 1;
  NcclHardware intra = NcclHardware::nvlink;  // inside a node: NVLink, else PCIe
  // The network plugin's declared latency (NCCL's latencyInter; fabric_transport.hpp), added to every
  // network step, twice under Simple.
  double net_latency_s = 0.0;
  // The network step of LL and LL128 in place of net_latency_s (fabric_transport.hpp's
  // nccl_ll_latency_us: what aws-ofi-nccl's own tuner charges them on p5); Simple keeps net_latency_s.
  double net_latency_ll_s = 0.0;
  // Scales NCCL's base and intra-node (NVLink, PCIe) latencies: the network profile's fitted
  // nccl_intra_latency_scale (1: NCCL's table as it is).
  double intra_scale = 1.0;
};

// What NCCL's bandwidth model needs to know of a call under a protocol.
struct NcclBandwidthInput {
  int nodes = 1;
  std::string_view scale_up_generation;   // "nvlink2" ... "nvlink5" (Volta ... Blackwell), else PCIe
  double simple_bus_bandwidth_Bps = 0.0;  // the bus bandwidth the call reaches under Simple
};
// NCCL's correction of a tree all-reduce's bandwidth by size (tuning.cc v2.27.7-1, treeCorrectionFactor,
// "Trees are not perfectly sticking to the model for medium sizes"): a factor <= 1 per protocol and power
// of two from 64 B to 256 MiB (index log2(bytes / 64)); 1 outside that range. The selector divides its
// estimate of a tree all-reduce's bandwidth part by it, as NCCL's tuner does; the run is not corrected.
double nccl_tree_correction(NcclProtocol p, double bytes);
// How many times longer the bytes of `algorithm` take under `p` than under Simple (>= 1), by NCCL's
// tuner (src/graph/tuning.cc, ncclTopoTuneModel): ring LL half the bandwidth, capped at llMaxBw of bus
// bandwidth; ring LL128 x 0.92; tree LL 1/3.8, capped at llMaxBw; tree LL128 7/9 inside a node, 120/128
// across nodes. Other algorithms (Simple only): 1.
double nccl_bandwidth_slowdown(std::string_view algorithm, NcclProtocol p, const NcclBandwidthInput& in);

// Whether NCCL's latency table has the algorithm (clustersim names: ring, tree, nvls, nvls_tree,
// sharp (NCCL's CollNetDirect), pat).
bool nccl_models_latency(std::string_view algorithm);
// NCCL's modelled latency (seconds) of one call of `algorithm` under protocol `p`: baseLat plus the
// per-step hwLat of the steps NCCL counts (ring: 2(N-1) steps for all-reduce, of which 2(nodes-1)
// cross the network; tree: 2 (ranks per node - 1) intra-node and 2 log2(nodes) network steps; ...).
// 0 for an algorithm without a row (nccl_models_latency false). NCCL's per-CPU network overhead
// (1-2 us per ring step, by CPU vendor) is not included.
double nccl_latency_s(std::string_view algorithm, NcclProtocol p, const NcclLatencyInput& in);

}  // namespace clustersim
