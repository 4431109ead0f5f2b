#pragma once
// In-network reduction features of a cluster, read in one place.
//
// NVLS (NVLink SHARP) is an NVSwitch generation 3 feature (NVLink 4, H100 onwards): the scale-up
// generation's `nvls` (scale_up_generation.cpp; the spec reader derives the generation from the GPU when
// the spec leaves it out). InfiniBand SHARP is a property of the switches: fabric.sharp.
#include "topologies/cluster_spec.hpp"
#include "topologies/scale_up_generation.hpp"

namespace clustersim {

inline bool has_nvls(const ClusterSpec& spec) {
  const auto& s = spec.node.scale_up;
  const ScaleUpGeneration* g = find_scale_up_generation(s.generation);
  return s.type == "nvswitch" && g != nullptr && g->nvls;
}

inline bool has_sharp(const ClusterSpec& spec) {
  return spec.fabric.sharp && spec.fabric.technology == "infiniband";
}

}  // namespace clustersim
