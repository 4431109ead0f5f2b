#pragma once
// In-network reduction features of a cluster, read in one place.
//
// NVLS (NVLink SHARP) is an NVSwitch generation 3 feature (NVLink 4, H100 onwards): scale-up
// generations nvlink4 and nvlink5. InfiniBand SHARP is a property of the switches: fabric.sharp.
#include "topologies/cluster_spec.hpp"

namespace clustersim {

inline bool has_nvls(const ClusterSpec& spec) {
  const auto& s = spec.node.scale_up;
  return s.type == "nvswitch" && (s.generation == "nvlink4" || s.generation == "nvlink5");
}

inline bool has_sharp(const ClusterSpec& spec) {
  return spec.fabric.sharp && spec.fabric.technology == "infiniband";
}

}  // namespace clustersim
