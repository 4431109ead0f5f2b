#pragma once
// Builds the inside of every node: GPUs, the scale-up domain, the PCIe tree and the NICs.
//
// Device order (the contract of Cluster): all GPUs of all nodes first, so that device index == GPU
// rank (GPU g of node n is rank n * gpus + g); then, node by node, the scale-up switch (a rack-scale
// NVLink domain's switch comes with its first node), the NICs, then the host bridge and PCIe switches.
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

// The scale-up types the registry knows ("nvswitch", "nvlink_mesh", ...), for validation messages.
std::vector<std::string> scale_up_types();

// The NVLink bricks between GPUs i < j of the DGX-1 hybrid cube-mesh (nvlink_mesh), as (i, j, bricks).
struct MeshLink {
  int a;
  int b;
  int bricks;
};
std::vector<MeshLink> hybrid_cube_mesh_links();

// Adds the GPUs, scale-up switches, PCIe devices, NICs and their links of every node of `spec` to
// `cluster`. Throws SpecError when the node description is inconsistent (a domain that does not span
// whole nodes, a mesh of the wrong size, ...).
NodeLayout build_nodes(Cluster& cluster, const ClusterSpec& spec);

}  // namespace clustersim
