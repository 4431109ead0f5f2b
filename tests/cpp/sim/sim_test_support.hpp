#pragma once
// Helpers for tests that run SimGrid: each simulation runs in a child process (the engine cannot be
// restarted), and results come back as text.
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/child_process.hpp"
#include "topologies/cluster.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim::testing {

// Runs `f` in a child process and returns the doubles it produced.
inline std::vector<double> in_child(const std::function<std::vector<double>()>& f) {
  const std::string out = run_in_child_process([&] {
    std::ostringstream o;
    o.precision(17);
    for (double v : f()) o << v << ' ';
    return o.str();
  });
  std::istringstream in(out);
  std::vector<double> values;
  double v = 0;
  while (in >> v) values.push_back(v);
  return values;
}

// A fat-tree of `nodes` nodes with `gpus` GPUs each and `nics` NICs of `nic_Gbps`, 0.6 us per
// fabric link, NVSwitch of `nvlink_GBps` at 0.7 us.
inline ClusterSpec fat_tree_spec(int nodes, int gpus, int nics, double nic_Gbps = 400.0, double nvlink_GBps = 450.0,
                                 double oversubscription = 1.0, int radix = 64) {
  ClusterSpec s;
  s.name = "test";
  s.gpu_id = "h100-sxm5-80gb";
  s.nodes = nodes;
  s.node.gpus = gpus;
  s.node.nics = nics;
  s.node.nic_bandwidth_Gbps = nic_Gbps;
  s.node.pcie_bandwidth_GBps = 64.0;
  s.node.scale_up = {"nvswitch", nvlink_GBps, 0.7};
  s.fabric.type = nodes == 1 ? "single_node" : "fat_tree";
  s.fabric.tiers = 2;
  s.fabric.switch_radix = radix;
  s.fabric.oversubscription = oversubscription;
  s.fabric.link_latency_us = 0.6;
  s.source_file = "test";
  return s;
}

}  // namespace clustersim::testing
