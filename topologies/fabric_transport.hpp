#pragma once
// The transports a scale-out fabric runs (fabric.transport): InfiniBand, RoCE, NVIDIA Spectrum-X, AWS
// EFA (SRD; efa_v3 on p5en and later), Google GPUDirect-TCPXO. A transport says which link technology it runs on, how its
// switches spread flows over equal-cost links (the default of fabric.routing) and what each message
// costs beyond the wire, each with its source.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim {

struct FabricTransport {
  std::string_view id;          // "efa"
  std::string_view technology;  // the link technology it runs on: "infiniband" | "ethernet"
  // How flows find their equal-cost links (fabric.routing "auto"): "adaptive" (the switch takes the
  // least loaded link), "ecmp" (a hash of the flow: flows collide), "spray" (the packets of every flow
  // spread over all equal-cost links: no flow collides with another while a link is idle).
  std::string_view routing;
  double message_latency_us;  // added to every step that crosses the fabric (the NIC's transport stack)
  // The network latency the transport's NCCL plugin declares (ncclNetProperties_t::latency, NCCL's
  // graph->latencyInter): NCCL's latency model adds it to every network step, twice under the Simple
  // protocol (the flush), sim/collectives/nccl_protocol.hpp.
  double nccl_latency_us;
  // The network step of the low-latency protocols (LL, LL128) as the plugin's own tuner models it, in
  // place of nccl_latency_us under those protocols (Simple keeps the declared latency, twice).
  double nccl_ll_latency_us;
  std::string_view summary;
  std::string_view source;
};

std::span<const FabricTransport> fabric_transports();
// The row `id`, or nullptr.
const FabricTransport* find_fabric_transport(std::string_view id);
std::vector<std::string> fabric_transport_ids();
// The transport a fabric of `technology` runs when the spec names none: infiniband on InfiniBand, roce
// on Ethernet; nullptr for other technologies (NVLink tori).
const FabricTransport* default_fabric_transport(std::string_view technology);

}  // namespace clustersim
