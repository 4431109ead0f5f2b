#pragma once
// The built cluster: devices and directed links, the graph every network backend and metric reads.
//
// Devices are numbered densely; GPUs come first (device index == GPU rank for the GPUs, in node
// order: GPU g of node n is rank n * gpus_per_node + g). A link is directed (one per direction of a
// full-duplex cable or port) and carries its bandwidth, latency and technology.
//
// The graph is a Boost.Graph internally (connectivity checks, shortest paths); this header exposes
// only clustersim's own types.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/cluster_spec.hpp"

namespace clustersim {

enum class DeviceKind : std::uint8_t {
  gpu,
  nvswitch,
  nic,
  pcie_switch,
  host_bridge,  // the CPU root complex of a node, above its PCIe switches
  leaf_switch,  // fat-tree / spine-leaf leaves, dragonfly routers
  spine_switch,
  core_switch
};
enum class LinkTechnology : std::uint8_t { nvlink, pcie, infiniband, ethernet };

const char* to_string(DeviceKind kind);
const char* to_string(LinkTechnology tech);
// The inverse of to_string: nullopt for an unknown name.
std::optional<DeviceKind> device_kind_named(std::string_view name);
std::optional<LinkTechnology> link_technology_named(std::string_view name);

struct Device {
  DeviceKind kind;
  std::string name;  // "node3/gpu5", "node3/nic5", "leaf2", "spine7"
  int node = -1;     // owning node, -1 for fabric switches
  int local_index = 0;
  bool forwards = true;  // false: traffic may end here but not pass through (GPUs, NICs' host side)
  int group = -1;        // fabric switches: pod (3-tier fat-tree) or group (dragonfly); -1 otherwise
};

struct Link {
  int src = 0;
  int dst = 0;
  double bandwidth_Bps = 0.0;
  double latency_s = 0.0;
  LinkTechnology technology = LinkTechnology::nvlink;
};

class Cluster {
 public:
  // Builds the graph for `spec` (the builder is chosen by fabric.type through a registry). Throws
  // SpecError with the JSON path when the spec describes something that cannot be built.
  static Cluster build(const ClusterSpec& spec);

  Cluster(Cluster&&) noexcept;
  Cluster& operator=(Cluster&&) noexcept;
  ~Cluster();

  const ClusterSpec& spec() const;
  int gpu_count() const;
  int gpus_per_node() const;
  // Whether switches pick by the load in flight when a transfer starts (fabric.routing in effect
  // adaptive or spray): then a route computed once holds only under the same load.
  bool routes_by_load() const;
  int node_of_gpu(int gpu) const;

  std::span<const Device> devices() const;
  std::span<const Link> links() const;
  // Indices of the links leaving `device`, in the order they were added (after finalize()).
  std::span<const int> out_links(int device) const;

  // The path provider of the network backends. Shortest route (in hops, through forwarding devices
  // only) from GPU `src` to GPU `dst` as link indices, appended to `links_out`. Among equal-cost paths
  // the choice is deterministic, by fabric.routing: at fabric switches the destination's digits
  // (d_mod_k), the least loaded link with `link_load` (transfers in flight per link; adaptive; ties and
  // an empty span: as d_mod_k), or a hash of (src, dst, flow_id) (ecmp, and every device inside a
  // node). src == dst gives an empty route. `lane` >= 0 names the NIC of a GPU that owns several
  // (nics > gpus: the connection of rail `lane`, as NCCL's network plugins stripe a GPU's messages over
  // its NICs): inside the source node, and where the last switch delivers to the destination's NICs,
  // the choice among equal-cost NICs is lane mod their count instead of the hash. `adaptive_choices`
  // (adaptive routing with `link_load` only): each choice that read the load appended as the number n
  // of equal-cost links, the index of the one taken, then the n link ids (the replay's
  // check that a route computed once holds under another load: sim/replay/traffic_classes.hpp).
  // `flow_hashed`: set true when a pick among several links hashed the flow id (ecmp, inside a node
  // without a lane), left alone otherwise: a route with no such pick is the same for every flow id.
  // Not thread-safe (a bounded cache of distances is filled on demand).
  void route(int src_gpu, int dst_gpu, std::uint64_t flow_id, std::vector<int>& links_out,
             std::span<const int> link_load = {}, int lane = -1, std::vector<int>* adaptive_choices = nullptr,
             bool* flow_hashed = nullptr) const;
  // The number of links of every route from `src` to `dst` (0 when src == dst), without building one.
  int route_hops(int src_gpu, int dst_gpu) const;
  double route_latency_s(std::span<const int> route_links) const;
  // What any route of `hops` links may hold: links of at most `link_latency_s` each, of the technologies
  // whose bits (1 << LinkTechnology) are set in `technologies`. Routes too short to reach a fabric
  // switch and come back stay on links inside nodes (and between them, in a torus), whose bound is
  // tighter: NVLink hops are not charged an InfiniBand link's latency.
  struct RouteBound {
    double link_latency_s = 0.0;
    unsigned technologies = 0;
  };
  RouteBound route_bound(int hops) const;

  // Construction API for builders (topologies/*_builder.cpp).
  explicit Cluster(ClusterSpec spec);
  // Room for this many devices and links in all (an estimate: only saves reallocations).
  void reserve(std::size_t devices, std::size_t links);
  int add_device(Device device);
  int add_link(Link link);
  // Adds two directed links, a -> b and b -> a, with the same properties. Returns the first.
  int add_duplex_link(int a, int b, double bandwidth_Bps, double latency_s, LinkTechnology tech);
  // Lets traffic pass through `device` or not (a torus makes its GPUs forward).
  void set_forwarding(int device, bool forwards);
  // Validates connectivity (every GPU reaches every other) and freezes the graph. Throws SpecError.
  void finalize();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clustersim
