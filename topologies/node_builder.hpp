#pragma once
// Builds the inside of every node: GPUs, the scale-up domain (NVSwitch or PCIe switch) and the NICs.
//
// Device order (the contract of Cluster): all GPUs of all nodes first, so that device index == GPU
// rank (GPU g of node n is rank n * gpus + g); then, node by node, the scale-up switch and the NICs.
// Scale-up domains are chosen through a registry keyed by node.scale_up.type.
#include <string>
#include <vector>

#include "topologies/cluster.hpp"

namespace clustersim {

// Where the builder put each node's NICs, for the fabric builders that wire them up.
struct NodeLayout {
  int nodes = 0;
  int nics_per_node = 0;
  std::vector<int> nic_devices;  // device index of NIC j of node n at [n * nics_per_node + j]

  int nic(int node, int index) const { return nic_devices[static_cast<std::size_t>(node * nics_per_node + index)]; }
};

// The scale-up types the registry knows ("nvswitch", "pcie"), for validation messages.
std::vector<std::string> scale_up_types();

// Adds the GPUs, scale-up switches, NICs and their links of every node of `spec` to `cluster`.
NodeLayout build_nodes(Cluster& cluster, const ClusterSpec& spec);

}  // namespace clustersim
