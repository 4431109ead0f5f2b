#pragma once
// Helpers shared by the topology tests.
#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "topologies/cluster.hpp"

namespace clustersim::test {

// A spec of `nodes` nodes of `gpus` GPUs and `nics` NICs on a 2-tier fat-tree of radix `radix`.
inline ClusterSpec fat_tree_spec(int nodes, int gpus, int nics, int radix, double oversubscription, bool rail,
                                 const std::string& scale_up = "nvswitch") {
  nlohmann::json doc = {{"name", "test"},
                        {"gpu", "h100-sxm5-80gb"},
                        {"nodes", nodes},
                        {"node",
                         {{"gpus", gpus},
                          {"scale_up", {{"type", scale_up}, {"bandwidth_GBps", 450}, {"latency_us", 0.7}}},
                          {"nics", nics},
                          {"nic_bandwidth_Gbps", 400},
                          {"pcie_bandwidth_GBps", 64}}},
                        {"fabric",
                         {{"type", "fat_tree"},
                          {"switch_radix", radix},
                          {"oversubscription", oversubscription},
                          {"rail_optimized", rail},
                          {"link_latency_us", 0.6}}}};
  return parse_cluster_spec(doc.dump(), "test.json");
}

inline long count_devices(const Cluster& c, DeviceKind kind) {
  return std::count_if(c.devices().begin(), c.devices().end(), [&](const Device& d) { return d.kind == kind; });
}

inline long count_links(const Cluster& c, DeviceKind from, DeviceKind to) {
  return std::count_if(c.links().begin(), c.links().end(), [&](const Link& l) {
    return c.devices()[static_cast<std::size_t>(l.src)].kind == from &&
           c.devices()[static_cast<std::size_t>(l.dst)].kind == to;
  });
}

// The leaf switch a NIC is cabled to (-1 if none).
inline int leaf_of_nic(const Cluster& c, int nic) {
  for (const int id : c.out_links(nic)) {
    const int head = c.links()[static_cast<std::size_t>(id)].dst;
    if (c.devices()[static_cast<std::size_t>(head)].kind == DeviceKind::leaf_switch) return head;
  }
  return -1;
}

}  // namespace clustersim::test
