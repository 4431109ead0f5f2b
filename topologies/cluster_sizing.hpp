#pragma once
// A cluster design grown (or shrunk) to a GPU count as its vendor would build it (`compare --gpus N`):
// whole nodes of the design's node; an NVLink domain of several nodes (NVL72) stays whole; a torus
// gets near-cubic dimensions of the same rank; the fabric keeps its switches, radix, oversubscription
// and rails, and grows by its own rule only when the switches cannot hold the NICs: a spine-leaf
// fabric spreads each leaf's uplinks over more spines (the next divisor of its uplinks), a fat tree or
// rail-optimized fabric of 2 tiers gets a third. What changed is listed.
#include <cstdint>
#include <string>
#include <vector>

#include "topologies/cluster_spec.hpp"

namespace clustersim {

struct SizedCluster {
  ClusterSpec spec;
  std::vector<std::string> changes;  // "nodes 32 -> 128", "fabric.spines 7 -> 21", ...
};

// Throws SpecError naming the spec's file and the key that cannot take `gpus` (a single node, GPUs that
// are not whole nodes or NVLink domains, a torus of a prime count, a fabric that cannot grow further)
// with the reason.
SizedCluster size_cluster_to_gpus(const ClusterSpec& spec, std::int64_t gpus);

}  // namespace clustersim
