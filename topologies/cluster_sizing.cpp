#include "topologies/cluster_sizing.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/error.hpp"
#include "topologies/cluster.hpp"

namespace clustersim {
namespace {

constexpr int kMaxTorusDimension = 65535;  // the spec reader's bound

// `total` split over dims.size() dimensions as evenly as its prime factors allow: the largest factor
// first onto the smallest dimension so far. Empty when a prime factor exceeds a dimension's bound.
std::vector<int> near_cubic_dims(std::int64_t total, std::size_t rank) {
  std::vector<std::int64_t> primes;
  for (std::int64_t p = 2; p * p <= total; ++p)
    while (total % p == 0) {
      primes.push_back(p);
      total /= p;
    }
  if (total > 1) primes.push_back(total);
  std::sort(primes.rbegin(), primes.rend());
  std::vector<std::int64_t> dims(rank, 1);
  for (std::int64_t p : primes)
    *std::min_element(dims.begin(), dims.end()) *= p;
  std::sort(dims.begin(), dims.end());
  std::vector<int> out;
  for (std::int64_t d : dims) {
    if (d > kMaxTorusDimension) return {};
    out.push_back(static_cast<int>(d));
  }
  return out;
}

std::string dims_text(const std::vector<int>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// The uplinks of a leaf (fat_tree_builder.cpp): floor(k / (1 + r)).
int leaf_uplinks(const FabricSpec& f) {
  return static_cast<int>(std::floor(f.switch_radix / (1.0 + f.oversubscription)));
}

bool is_capacity_error(const SpecError& e) {
  const std::string& p = e.json_path();
  return p == "/fabric/switch_radix" || p == "/fabric/spine_radix" || p == "/fabric/spines" || p == "/fabric/tiers";
}

// One growth step by the fabric's own rule, or false when it has none left.
bool grow_fabric(ClusterSpec& s, std::vector<std::string>& changes) {
  FabricSpec& f = s.fabric;
  if (f.type == "spine_leaf") {
    const int u = leaf_uplinks(f);
    for (int spines = std::max(f.spines, 1) + 1; spines <= u; ++spines)
      if (u % spines == 0) {
        changes.push_back("fabric.spines " + std::to_string(f.spines) + " -> " + std::to_string(spines));
        f.spines = spines;
        return true;
      }
    return false;
  }
  if ((f.type == "fat_tree" || f.type == "rail_optimized") && f.tiers == 2) {
    changes.push_back("fabric.tiers 2 -> 3");
    f.tiers = 3;
    return true;
  }
  return false;
}

}  // namespace

SizedCluster size_cluster_to_gpus(const ClusterSpec& spec, std::int64_t gpus) {
  const std::string& file = spec.source_file;
  const std::string n_text = std::to_string(gpus);
  if (gpus < 1) throw SpecError("--gpus", "", "expected a number of GPUs >= 1, got " + n_text);
  SizedCluster out{spec, {}};
  ClusterSpec& s = out.spec;
  if (gpus == spec.gpu_count()) return out;
  if (spec.fabric.type == "single_node" || spec.fabric.type == "graph")
    throw SpecError(file, "/fabric/type",
                    "a " + spec.fabric.type + " fabric is the design as drawn (" + std::to_string(spec.gpu_count()) +
                        " GPUs); it does not grow to " + n_text + " GPUs");
  const int domain = spec.domain_gpus();
  if (gpus % domain != 0)
    throw SpecError(file, domain > spec.node.gpus ? "/node/scale_up/domain_gpus" : "/node/gpus",
                    n_text + " GPUs are not whole " + (domain > spec.node.gpus ? "NVLink domains" : "nodes") + " of " +
                        std::to_string(domain) + " GPUs");
  const std::int64_t nodes = gpus / spec.node.gpus;
  out.changes.push_back("nodes " + std::to_string(spec.nodes) + " -> " + std::to_string(nodes));
  s.nodes = static_cast<int>(std::min<std::int64_t>(nodes, 1 << 30));
  if (s.fabric.type == "torus") {
    const std::vector<int> dims = near_cubic_dims(gpus, std::max<std::size_t>(spec.fabric.dims.size(), 1));
    if (dims.empty())
      throw SpecError(file, "/fabric/dims",
                      n_text + " GPUs have a prime factor above " + std::to_string(kMaxTorusDimension) +
                          ": no torus of " + std::to_string(spec.fabric.dims.size()) + " dimensions holds them");
    out.changes.push_back("fabric.dims " + dims_text(spec.fabric.dims) + " -> " + dims_text(dims));
    s.fabric.dims = dims;
  }
  for (;;) {
    try {
      (void)Cluster::build(s);
      return out;
    } catch (const SpecError& e) {
      if (!is_capacity_error(e) || !grow_fabric(s, out.changes))
        throw SpecError(e.file(), e.json_path(),
                        "at " + n_text + " GPUs (" + std::to_string(nodes) + " nodes), " + e.message() +
                            (is_capacity_error(e) ? "; the fabric has no larger form here" : ""));
    }
  }
}

}  // namespace clustersim
