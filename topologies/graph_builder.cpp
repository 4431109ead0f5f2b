// Graph fabrics. Device i of fabric.devices gets the next device index (after the nodes' devices);
// link i of fabric.links joins two named devices, once each way when duplex (the default), at
// bandwidth_Gbps per direction with latency_us. Names must be unique; a link naming an unknown device,
// or of bandwidth <= 0, is refused at its JSON path; a graph that leaves two GPUs unconnected is
// refused by Cluster::finalize at /fabric.
#include "topologies/graph_builder.hpp"

#include <unordered_map>

#include "sim/core/error.hpp"
#include "sim/core/units.hpp"

namespace clustersim {

void build_graph(Cluster& cluster, const ClusterSpec& spec, const NodeLayout& /*nodes*/, const FabricPlane& /*plane*/) {
  const FabricSpec& f = spec.fabric;
  const std::string& file = spec.source_file;
  std::unordered_map<std::string, int> by_name;
  for (std::size_t i = 0; i < cluster.devices().size(); ++i)
    by_name.emplace(cluster.devices()[i].name, static_cast<int>(i));
  for (std::size_t i = 0; i < f.devices.size(); ++i) {
    const GraphDeviceSpec& d = f.devices[i];
    const std::string where = "/fabric/devices/" + std::to_string(i);
    const std::optional<DeviceKind> kind = device_kind_named(d.kind);
    if (!kind || *kind == DeviceKind::gpu)
      throw SpecError(file, where + "/kind", "expected a switch, NIC or host bridge kind, got \"" + d.kind + "\"");
    if (by_name.count(d.name) != 0)
      throw SpecError(file, where + "/name", "the device name \"" + d.name + "\" is already taken");
    by_name.emplace(
        d.name, cluster.add_device(
                    Device{.kind = *kind, .name = d.name, .local_index = static_cast<int>(i), .forwards = d.forwards}));
  }
  const auto lookup = [&](const std::string& name, const std::string& where) {
    const auto it = by_name.find(name);
    if (it == by_name.end())
      throw SpecError(file, where,
                      "unknown device \"" + name +
                          "\" (a fabric.devices name, or a node device such as \"node0/gpu0\", \"node0/nic0\")");
    return it->second;
  };
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    const GraphLinkSpec& l = f.links[i];
    const std::string where = "/fabric/links/" + std::to_string(i);
    const int src = lookup(l.src, where + "/src");
    const int dst = lookup(l.dst, where + "/dst");
    if (src == dst)
      throw SpecError(file, where + "/dst", "expected a device other than the source, got \"" + l.dst + "\"");
    if (!(l.bandwidth_Gbps > 0))
      throw SpecError(file, where + "/bandwidth_Gbps",
                      "expected a number > 0, got " + std::to_string(l.bandwidth_Gbps));
    if (!(l.latency_us >= 0))
      throw SpecError(file, where + "/latency_us", "expected a number >= 0, got " + std::to_string(l.latency_us));
    const std::optional<LinkTechnology> tech =
        link_technology_named(l.technology.empty() ? f.technology : l.technology);
    if (!tech)
      throw SpecError(file, where + "/technology",
                      "expected one of nvlink, pcie, infiniband, ethernet, got \"" + l.technology + "\"");
    const double bandwidth_Bps = l.bandwidth_Gbps * units::kGbpsToBps;
    const double latency_s = l.latency_us * units::kUsToS;
    if (l.duplex)
      cluster.add_duplex_link(src, dst, bandwidth_Bps, latency_s, *tech);
    else
      cluster.add_link(Link{src, dst, bandwidth_Bps, latency_s, *tech});
  }
}

}  // namespace clustersim
