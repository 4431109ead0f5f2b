#pragma once
// The cluster spec of DESIGN.md (stable keys), parsed and validated. Units are those of the keys.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace clustersim {

// The GPU-to-GPU domain inside a node (NVLink through NVSwitch chips, or none).
struct ScaleUpSpec {
  std::string type = "nvswitch";  // nvswitch | pcie
  double bandwidth_GBps = 0.0;    // per GPU per direction
  double latency_us = 0.0;        // GPU to GPU through the domain

  bool operator==(const ScaleUpSpec&) const = default;
};

struct NodeSpec {
  int gpus = 8;
  ScaleUpSpec scale_up;
  int nics = 8;                     // GPU i uses NIC i * nics / gpus
  double nic_bandwidth_Gbps = 400;  // per NIC per direction (line rate)
  double pcie_bandwidth_GBps = 64;  // GPU <-> NIC path per direction (PCIe Gen5 x16: 64 GB/s)

  bool operator==(const NodeSpec&) const = default;
};

struct FabricSpec {
  std::string type = "fat_tree";  // fat_tree | single_node (more types in the topology issue)
  int tiers = 2;
  int switch_radix = 64;
  double oversubscription = 1.0;  // downlink:uplink bandwidth ratio at the leaf tier, >= 1
  bool rail_optimized = false;    // NIC i of every node on rail i
  double link_latency_us = 0.6;   // per switch hop (switch + cable)
  std::string technology = "infiniband";  // infiniband | ethernet

  bool operator==(const FabricSpec&) const = default;
};

struct PowerSpec {
  double pue = 1.3;

  bool operator==(const PowerSpec&) const = default;
};

struct CostSpec {
  double electricity_usd_per_kwh = 0.10;
  double amortization_years = 4.0;

  bool operator==(const CostSpec&) const = default;
};

struct ClusterSpec {
  std::string name;
  std::string description;  // free text: what the spec models and where its figures come from
  // `gpu` is a catalogue id, or an inline object (kept as its JSON text; resolved by the hardware
  // catalogue, which reports errors at `gpu_json_path` of `source_file`).
  static constexpr std::string_view gpu_json_path = "/gpu";
  std::string gpu_id;
  std::string gpu_inline_json;
  int nodes = 1;
  NodeSpec node;
  FabricSpec fabric;
  PowerSpec power;
  CostSpec cost;
  std::string source_file;  // where the spec came from, for error messages

  int gpu_count() const { return nodes * node.gpus; }
  bool operator==(const ClusterSpec&) const = default;
};

using Overrides = std::vector<std::pair<std::string, std::string>>;  // ("fabric.tiers", "3")

// Loads a cluster spec from a JSON file path or a preset name (topologies/presets/NAME.json), applies
// the overrides, validates it. Throws SpecError naming the file and JSON path of the first bad value.
ClusterSpec load_cluster_spec(std::string_view source, const Overrides& overrides = {});
// Parses and validates JSON text (tests, Python dicts). `file` names it in errors.
ClusterSpec parse_cluster_spec(std::string_view json_text, const std::string& file);
// The spec as JSON text (all keys, defaults filled in): the round-trip of parse_cluster_spec.
std::string cluster_spec_to_json(const ClusterSpec& spec);

std::vector<std::string> cluster_preset_names();

}  // namespace clustersim
