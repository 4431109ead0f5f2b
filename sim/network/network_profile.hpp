#pragma once
// NetworkProfile: what the links deliver to collectives beyond their raw line rate.
//
// NCCL does not move data at the link rate: protocol headers, flags and the reduction kernels cost a
// technology-dependent fraction (an A100 node's all-reduce saturates at 229 GB/s bus bandwidth on
// 300 GB/s NVLink), and every step of an algorithm pays a synchronization latency on top of the wire
// latency. The profile holds, per link technology, the bandwidth efficiency and the per-step latency,
// plus a fixed latency per collective call (launch and setup), each with its provenance. Backends
// scale link bandwidths by the efficiency; algorithms add the latencies.
//
// `ideal` (efficiency 1, no overheads) gives textbook alpha-beta closed forms; `nccl` (the default)
// holds values fitted from nccl-tests measurements (`clustersim calibrate-network`).
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/cluster.hpp"

namespace clustersim {

struct FittedValue {
  double value = 0.0;
  std::string source;     // measurements it was fitted from (or "assumed: ...")
  std::string domain;     // where the fit holds, e.g. "1 MiB..1 GiB, 2..8 GPUs"
  double residual = 0.0;  // relative RMS error of the fit on its own data
};

struct TechnologyProfile {
  FittedValue bandwidth_efficiency{1.0, "ideal", "", 0.0};
  FittedValue step_latency_s{0.0, "ideal", "", 0.0};
};

struct NetworkProfile {
  std::string name = "ideal";
  std::string description;
  std::vector<std::string> gpus;                  // catalogue ids of the GPUs whose systems the profile was fitted on
  std::array<TechnologyProfile, 4> technologies;  // indexed by LinkTechnology
  FittedValue collective_latency_s{0.0, "ideal", "", 0.0};
  // Fraction of the NVLink line rate an in-switch (NVLS) reduction reaches; multimem operations do
  // not run at the rate of plain copies.
  FittedValue nvls_efficiency{1.0, "ideal", "", 0.0};
  // Latency of each in-switch (NVLS) phase beyond its hops': the multimem reduction and the switch's
  // synchronisation. A node's NVLS all-reduce is one phase; NCCL's tuner charges it 25 us on NVLink
  // (src/graph/tuning.cc, hwLat).
  FittedValue nvls_latency_s{0.0, "ideal", "", 0.0};
  // Whether collectives run NCCL's wire protocols (sim/collectives/nccl_protocol.hpp): each call takes
  // the LL, LL128 or Simple protocol with the least modelled time, paying that protocol's share of the
  // link bandwidth and NCCL's own latency table on top of the latencies above. false (`ideal`): every
  // collective moves its bytes at the full link rate with wire latencies only.
  bool nccl_protocols = false;
  // What NCCL's base and intra-node per-step latencies (nccl_protocol.hpp) are multiplied by: NCCL's
  // table is a tuning model, and measured NVLink steps of recent nodes are faster than it says (fitted
  // with the NVLink values; 1 when no table fits it).
  FittedValue nccl_intra_latency_scale{1.0, "NCCL's table as it is", "", 0.0};

  const TechnologyProfile& of(LinkTechnology t) const { return technologies[static_cast<std::size_t>(t)]; }
  TechnologyProfile& of(LinkTechnology t) { return technologies[static_cast<std::size_t>(t)]; }
  double effective_bandwidth_Bps(const Link& link) const {
    return link.bandwidth_Bps * of(link.technology).bandwidth_efficiency.value;
  }
};

NetworkProfile ideal_network_profile();
// "auto": the shipped profile whose `gpus` lists `gpu_id`, else "ideal".
inline constexpr std::string_view kAutoNetworkProfile = "auto";
std::string network_profile_for_gpu(std::string_view gpu_id);
// A profile by name ("ideal", or one of sim/network/profiles/*.json, e.g. "nccl") or a JSON file.
// Throws SpecError (file + JSON path) for a bad file, listing the known names for an unknown one.
NetworkProfile load_network_profile(std::string_view name_or_path);
NetworkProfile parse_network_profile(std::string_view json_text, const std::string& file);
std::string network_profile_to_json(const NetworkProfile& profile);
std::vector<std::string> network_profile_names();

}  // namespace clustersim
