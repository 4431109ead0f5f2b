#pragma once
// NetworkBackend: the clock and the network of one simulation.
//
// The replay engine is written once against this interface (docs/architecture.md: "two fidelities, one replay
// semantics"): it schedules callbacks at simulated times and starts groups of point-to-point
// transfers whose completion it waits for. A backend decides how long transfers take:
//   flow       SimGrid's max-min bandwidth sharing over every link of every route (real contention).
//   analytical own event queue; each transfer's rate is fixed when it starts (see
//              analytical_backend.cpp). Exact on idle fabrics, approximate under cross-traffic.
// A backend is used for one simulation and then discarded (SimGrid cannot restart in a process).
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/network/link_classes.hpp"
#include "sim/network/link_usage.hpp"

namespace clustersim {

class Cluster;
struct NetworkProfile;

struct Transfer {
  int src_gpu = 0;
  int dst_gpu = 0;
  double bytes = 0.0;
  // Part of the steady state of a synchronized, pipelined algorithm (NCCL's tree: every edge moves
  // one chunk per step; an even all-to-all: every pair advances at once). The flow backend moves
  // the pipelined transfers of one start_transfers call that carry the same bytes as one unit: one
  // rate for all of them, bounded by max-min sharing on the links of every member, so they end
  // together (one solver event instead of one per flow). The analytical backend ignores it (its
  // rates are fixed at the start).
  bool pipelined = false;
  // The NIC rail of the sending GPU this transfer uses when GPUs own several NICs (-1: any, by the
  // route's hash). Set by stripe_over_nics (collective_plan.hpp); Cluster::route takes it.
  int lane = -1;
  // A representative of a class of identical transfers (NetworkBackend::use_link_classes): its route
  // is class route `route_class` of the link classes; -1: routed by the cluster.
  int route_class = -1;
};

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;

  virtual const char* fidelity() const = 0;
  // The bytes a transfer of `bytes` moves on this backend (the flow backend moves whole bytes; the
  // analytical one the exact fraction). A closed form standing for the backend's replay times these.
  virtual double delivered_bytes(double bytes) const { return bytes; }
  // One line saying what computes transfer times (for the report's provenance).
  virtual std::string description() const = 0;
  virtual double now_s() const = 0;
  // Calls `fn` at simulated time `time_s` (>= now_s()). Callbacks at equal times run in the order
  // they were scheduled.
  virtual void schedule(double time_s, std::function<void()> fn) = 0;
  // Starts every transfer now; calls `done` once the last one has delivered its bytes. Transfers of
  // zero bytes or with src == dst finish at once. `flow_id` seeds ECMP path choice (each transfer
  // uses flow_id + its index).
  virtual void start_transfers(std::span<const Transfer> transfers, std::uint64_t flow_id,
                               std::function<void()> done) = 0;
  // Runs until no event is left.
  virtual void run() = 0;
  // Traffic per link of the cluster (indexed like Cluster::links()): bytes, busy time, bytes per label.
  virtual const LinkUsage& link_usage() const = 0;
  // Labels the transfers started from now on (the replay uses the communicator's index).
  virtual void set_traffic_label(std::uint16_t label) = 0;
  const std::vector<double>& link_bytes() const { return link_usage().bytes(); }
  // From now on transfers with a route_class are representatives of classes of identical transfers
  // (link_classes.hpp): their routes are class routes, counted on canonical links. A backend that
  // cannot (flow: SimGrid shares bandwidth per flow) returns false, and the replay hands it every
  // transfer. The classes must outlive their use; link_usage() then holds the canonical links'
  // traffic only (the replay copies it to the other links of each class).
  virtual bool use_link_classes(const LinkClasses* /*classes*/) { return false; }
  // Back to the state it was built in (no event, no transfer, no traffic counted, no link classes), for
  // a replay that starts over (traffic classes under adaptive routing whose check failed at a launch:
  // sim/replay/traffic_classes.hpp). False where it cannot (flow: SimGrid runs once per process).
  virtual bool restart() { return false; }
};

// Link bandwidths are the profile's effective bandwidths (line rate x technology efficiency).
using NetworkBackendFactory = std::unique_ptr<NetworkBackend> (*)(const Cluster& cluster,
                                                                  const NetworkProfile& profile);

struct NetworkBackendEntry {
  const char* fidelity;
  const char* summary;
  NetworkBackendFactory make;
};

// The registry of backends by fidelity name.
std::span<const NetworkBackendEntry> network_backends();
// The backend registered as `fidelity`, or nullptr.
const NetworkBackendEntry* find_network_backend(std::string_view fidelity);

}  // namespace clustersim
