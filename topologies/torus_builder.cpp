// Torus of dims (a_1, ..., a_n): GPU rank r has coordinates c_i = (r / (a_1 ... a_{i-1})) mod a_i.
// Each GPU is joined to its + neighbour in every dimension of size >= 2 (coordinate c_i + 1 mod a_i)
// by a duplex link, so every GPU has 2 links per such dimension (to + and from -): 6 in 3D. A
// dimension of size 2 gives two parallel links between the pair (the direct and the wrap-around
// cable), size 1 none. GPU count = a_1 ... a_n = nodes x node.gpus. Links run at
// fabric.link_bandwidth_Gbps (default node.nic_bandwidth_Gbps) with link_latency_us each;
// technology fabric.technology (default nvlink). Routes are shortest paths: the hop count between
// two GPUs is sum_i min(|dc_i|, a_i - |dc_i|).
#include "topologies/torus_builder.hpp"

#include <algorithm>
#include <cstdint>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace clustersim {
namespace {

std::string dims_text(const std::vector<int>& dims, const char* sep) {
  std::string out;
  for (const int a : dims)
    out += (out.empty() ? "" : sep) + std::to_string(a);
  return out;
}

double link_Bps(const ClusterSpec& spec) {
  const double Gbps =
      spec.fabric.link_bandwidth_Gbps > 0 ? spec.fabric.link_bandwidth_Gbps : spec.node.nic_bandwidth_Gbps;
  return Gbps * units::kGbpsToBps;
}

}  // namespace

std::vector<int> torus_coordinates(const std::vector<int>& dims, int rank) {
  std::vector<int> c(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    c[i] = rank % dims[i];
    rank /= dims[i];
  }
  return c;
}

void build_torus(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& /*nodes*/, const FabricPlane& /*plane*/) {
  const std::vector<int>& dims = spec.fabric.dims;
  if (dims.empty()) throw SpecError(spec.source_file, "/fabric/dims", "required key is missing (the torus dimensions)");
  std::int64_t product = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 1)
      throw SpecError(spec.source_file, "/fabric/dims/" + std::to_string(i),
                      "expected a torus dimension between 1 and 65535, got " + std::to_string(dims[i]));
    product *= dims[i];
  }
  if (product != spec.gpu_count())
    throw SpecError(spec.source_file, "/fabric/dims",
                    "expected the product of dims (" + dims_text(dims, " x ") + " = " + std::to_string(product) +
                        ") to equal the GPU count nodes x node.gpus = " + std::to_string(spec.nodes) + " x " +
                        std::to_string(spec.node.gpus) + " = " + std::to_string(spec.gpu_count()));
  const double bandwidth_Bps = link_Bps(spec);
  const double latency_s = spec.fabric.link_latency_us * units::kUsToS;
  const LinkTechnology tech = fabric_technology(spec);
  const int gpus = spec.gpu_count();
  for (int g = 0; g < gpus; ++g)
    cluster.set_forwarding(g, true);
  int stride = 1;
  for (const int a : dims) {
    if (a >= 2) {
      for (int g = 0; g < gpus; ++g) {
        const int c = (g / stride) % a;
        const int plus = g + ((c + 1) % a - c) * stride;
        cluster.add_duplex_link(g, plus, bandwidth_Bps, latency_s, tech);
      }
    }
    stride *= a;
  }
}

// Cutting every ring of the largest dimension a_max in two halves cuts 2 of its links in each
// direction; there are GPUs / a_max such rings.
std::optional<double> torus_bisection_Bps(const Cluster& cluster) {
  const ClusterSpec& spec = cluster.spec();
  const NodeSpec& n = spec.node;
  // No other path between GPUs: no scale-up links, no PCIe tree, no NIC shared by two GPUs.
  const bool torus_only = n.scale_up.type == "none" && n.pcie_switches == 0 && (n.nics == 0 || n.nics >= n.gpus);
  if (!torus_only || spec.fabric.dims.empty()) return std::nullopt;
  const int a_max = *std::max_element(spec.fabric.dims.begin(), spec.fabric.dims.end());
  if (a_max == 1) return 0.0;
  if (a_max % 2 != 0) return std::nullopt;
  return 2.0 * (static_cast<double>(spec.gpu_count()) / a_max) * link_Bps(spec);
}

}  // namespace clustersim
