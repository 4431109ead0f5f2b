#pragma once
// What a built cluster is made of and how well it connects: device, port, cable and transceiver
// counts by type and speed (the cost model's bill of materials), bisection bandwidth, diameter and
// hop counts between GPU pairs, oversubscription per switch tier. The rules (what is a cable, copper
// or optical, how bisection is computed) are written at the top of topology_metrics.cpp.
#include <span>
#include <string>
#include <vector>

#include "topologies/cluster.hpp"

namespace clustersim {

struct DeviceCount {
  std::string kind;  // a DeviceKind name, or "nvswitch_chip" (from the scale-up generation)
  long count = 0;
};

struct PortCount {
  std::string device_kind;
  std::string technology;  // nvlink | pcie | infiniband | ethernet
  double speed_Gbps = 0;   // per direction
  long count = 0;
};

struct CableCount {
  std::string technology;  // infiniband | ethernet | nvlink
  std::string medium;      // copper | optical
  double speed_Gbps = 0;
  long count = 0;
};

struct TransceiverCount {
  double speed_Gbps = 0;
  long count = 0;
};

struct TierOversubscription {
  std::string tier;  // leaf_switch, spine_switch, core_switch
  double downlink_Bps = 0;
  double uplink_Bps = 0;
  double ratio = 0;  // downlink / uplink
};

struct TopologyMetrics {
  std::string name;
  std::string fabric;  // fabric.type (+ details)
  int nodes = 0;
  int gpus = 0;
  int racks = 0;
  long directed_links = 0;
  std::vector<DeviceCount> devices;
  std::vector<PortCount> ports;
  std::vector<CableCount> cables;
  std::vector<TransceiverCount> transceivers;
  double bisection_Bps = 0;  // one direction
  std::string bisection_method;
  int diameter_hops = 0;
  double average_hops = 0;
  std::vector<long> hop_histogram;  // [h]: ordered GPU pairs whose routes have h links
  long pairs_measured = 0;
  bool hops_sampled = false;  // true: all sources to a sample of destinations
  std::vector<TierOversubscription> oversubscription;
};

TopologyMetrics compute_metrics(const Cluster& cluster);
// compute_metrics() without the measurements (hops, oversubscription, bisection: left at their
// defaults): the names and the hardware counts (devices, ports, cables, transceivers, racks, links),
// all that the power and cost models read, at the cost of one pass over devices and links.
TopologyMetrics hardware_metrics(const Cluster& cluster);

// Bandwidth (bytes/s) of the minimum cut separating the GPUs in `side_a` from all other GPUs, for
// traffic from A to the others (max-flow, Boost.Graph push-relabel); GPUs that do not forward are
// only sources (in A) or sinks (outside A).
double max_flow_Bps(const Cluster& cluster, std::span<const int> side_a);

std::string metrics_to_json(const TopologyMetrics& metrics);
// A readable report: tables of counts, then bisection, diameter, hops, oversubscription.
std::string metrics_to_text(const TopologyMetrics& metrics);

}  // namespace clustersim
