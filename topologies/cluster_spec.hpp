#pragma once
// The cluster spec of docs/architecture.md (stable keys, plus the extensions documented in docs/specs.md),
// parsed and validated. Units are those of the keys.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace clustersim {

// The GPU-to-GPU domain inside a node or a rack (NVLink through NVSwitch chips, direct NVLink
// meshes or bridges, PCIe, or none).
struct ScaleUpSpec {
  std::string type = "nvswitch";  // nvswitch | nvlink_mesh | nvlink_pairs | pcie | none
  std::string generation;         // "" or an id of scale_up_generation_ids(): figures default from it
  double bandwidth_GBps = 0.0;    // per GPU per direction
  double latency_us = 0.0;        // GPU to GPU through the domain
  int domain_gpus = 0;            // nvswitch: GPUs per NVLink domain, a multiple of node.gpus (0: node.gpus)

  bool operator==(const ScaleUpSpec&) const = default;
};

struct NodeSpec {
  int gpus = 8;
  ScaleUpSpec scale_up;
  int nics = 8;                     // GPU i uses NIC i * nics / gpus
  double nic_bandwidth_Gbps = 400;  // per NIC per direction (line rate)
  double pcie_bandwidth_GBps = 64;  // GPU <-> NIC path per direction (PCIe Gen5 x16: 64 GB/s)
  int pcie_switches = 0;            // 0: direct GPU <-> NIC path; >= 1: PCIe switches under a host bridge

  // NICs each GPU owns when there are more NICs than GPUs (AWS p5: 32 EFA NICs for 8 GPUs, 4 each);
  // 1 otherwise (GPUs own one NIC, or share one).
  int nics_per_gpu() const { return nics > gpus && gpus > 0 && nics % gpus == 0 ? nics / gpus : 1; }
  // The NIC (index in the node) GPU `gpu` of the node uses: NIC gpu * nics / gpus, or with several NICs
  // per GPU its own NIC of rail `lane`, gpu k + lane. And the GPU NIC `nic` hangs off when there are
  // more NICs than GPUs (nic * gpus / nics); with fewer, the first GPU that uses it.
  int nic_of_gpu(int gpu, int lane = 0) const {
    if (nics_per_gpu() > 1) return gpu * nics_per_gpu() + lane % nics_per_gpu();
    return static_cast<int>(static_cast<std::int64_t>(gpu) * nics / gpus);
  }
  int gpu_of_nic(int nic) const {
    if (nics > gpus) return static_cast<int>(static_cast<std::int64_t>(nic) * gpus / nics);
    return static_cast<int>((static_cast<std::int64_t>(nic) * gpus + nics - 1) / nics);
  }

  bool operator==(const NodeSpec&) const = default;
};

// `graph` fabrics: devices and links given one by one.
struct GraphDeviceSpec {
  std::string name;
  std::string kind = "leaf_switch";  // a DeviceKind name other than gpu
  bool forwards = true;

  bool operator==(const GraphDeviceSpec&) const = default;
};

struct GraphLinkSpec {
  std::string src;  // device names: "node0/gpu3", "node1/nic0", or a fabric.devices name
  std::string dst;
  double bandwidth_Gbps = 0.0;  // per direction
  double latency_us = 0.0;
  std::string technology;  // "" : fabric.technology
  bool duplex = true;      // true: one link each way

  bool operator==(const GraphLinkSpec&) const = default;
};

struct FabricSpec {
  std::string type = "fat_tree";  // a name of fabric_types()
  int tiers = 2;                  // fat_tree, rail_optimized: 2 or 3
  int switch_radix = 64;
  double oversubscription = 1.0;          // downlink:uplink bandwidth ratio at the leaf tier, >= 1
  bool rail_optimized = false;            // NIC i of every node on rail i
  double link_latency_us = 0.6;           // per switch hop (switch + cable)
  std::string technology = "infiniband";  // infiniband | ethernet | nvlink
  bool sharp = false;                     // in-network reduction in the switches (InfiniBand SHARP); infiniband only
  // How switches pick among equal-cost next hops: "d_mod_k" (destination-based, the port is a digit of
  // the destination's NIC number, as InfiniBand's subnet manager routes fat-trees), "adaptive" (the
  // port carrying the fewest transfers when a transfer starts, ties as d_mod_k: InfiniBand adaptive
  // routing), "ecmp" (a hash of the flow at every hop, as Ethernet switches do), or "auto" (adaptive
  // on infiniband, ecmp otherwise), or "spray" (every flow's packets over all equal-cost links, as
  // AWS EFA's SRD does: no flow collides with another while an equal-cost link is idle). "auto" takes
  // the transport's routing (routing_in_effect()).
  std::string routing = "auto";
  // The transport (fabric_transport.hpp): infiniband | roce | spectrum_x | efa | tcpxo; "" : the
  // technology's default (infiniband on InfiniBand, roce on Ethernet), listed in derived_defaults.
  std::string transport;

  // spine_leaf
  int spine_radix = 0;  // ports per spine (0: switch_radix)
  int spines = 0;       // spine count (0: one per leaf uplink); a leaf spreads its uplinks over them
  // every switched fabric
  int planes = 1;  // independent copies of the fabric; each NIC has one port per plane
  // torus
  std::vector<int> dims;
  double link_bandwidth_Gbps = 0.0;  // torus and graph links per direction (0: node.nic_bandwidth_Gbps)
  // dragonfly
  int groups = 0;
  int routers_per_group = 0;
  int global_links_per_router = 0;
  // graph
  std::vector<GraphDeviceSpec> devices;
  std::vector<GraphLinkSpec> links;
  // cabling (metrics): nodes per rack (0: the nodes of one NVLink domain, at least 1)
  int nodes_per_rack = 0;

  // The transport row id in effect ("" for fabrics without one: NVLink tori).
  std::string transport_in_effect() const;
  // fabric.routing with "auto" resolved by the transport: adaptive | d_mod_k | ecmp | spray.
  std::string routing_in_effect() const;

  bool operator==(const FabricSpec&) const = default;
};

// Facility overhead and replacements of the power catalogue's figures (sim/power/catalogue; every
// device then draws the given constant power, or the GPU the given power in that activity). Unset
// optionals keep the catalogue's figure. Watts.
struct PowerSpec {
  double pue = 1.3;  // facility power / IT power, >= 1
  std::optional<double> gpu_tensor_w;
  std::optional<double> gpu_vector_w;
  std::optional<double> gpu_communication_w;
  std::optional<double> gpu_overlap_communication_w;  // added to compute power while a collective overlaps it
  std::optional<double> gpu_waiting_w;
  std::optional<double> host_w_per_gpu;  // CPUs, memory, fans, storage, supply losses, per GPU
  std::optional<double> nvswitch_chip_w;
  std::optional<double> nic_w;
  std::optional<double> switch_w;  // every fabric switch
  std::optional<double> transceiver_w;

  bool operator==(const PowerSpec&) const = default;
};

// Replacements of the price catalogue's figures (sim/cost/catalogue/prices.json), US dollars.
struct PriceOverrides {
  std::optional<double> server_usd_per_gpu;  // a GPU server without its scale-out NICs, per GPU
  std::optional<double> nic_usd;
  std::optional<double> switch_usd_per_port;  // a fabric switch costs this x its radix
  std::optional<double> copper_cable_usd;
  std::optional<double> optical_cable_usd;
  std::optional<double> transceiver_usd;

  bool operator==(const PriceOverrides&) const = default;
};

struct CostSpec {
  double electricity_usd_per_kwh = 0.10;
  double amortization_years = 4.0;
  double operations_usd_per_year = 0.0;  // staff, support contracts, space: added to the hourly cost
  double other_capex_usd = 0.0;          // storage, racks, installation: added to the capital cost
  PriceOverrides prices;

  bool operator==(const CostSpec&) const = default;
};

// Failure rates and restart figures of a training run on the cluster (sim/training_run,
// docs/time_to_train.md). Rates are failures per device per year; an unset optional keeps the default
// fitted to the Llama 3 405B run (sim/training_run/reliability_spec.cpp, every figure sourced there).
struct ReliabilitySpec {
  std::optional<double> gpu_per_year;                  // per GPU: faulty GPU (NVLink included), SRAM, GSP, thermal, SDC
  std::optional<double> hbm_per_year;                  // per GPU: its HBM
  std::optional<double> nvswitch_per_year;             // per NVSwitch chip
  std::optional<double> nic_per_year;                  // per scale-out NIC
  std::optional<double> switch_per_year;               // per fabric switch
  std::optional<double> link_per_year;                 // per scale-out cable (the cable, its optics)
  std::optional<double> host_per_year;                 // per node: CPU, memory, power supply, SSD, chassis, IO board
  std::optional<double> software_per_year;             // per node: software bugs, NCCL timeouts, dependencies
  std::optional<double> host_maintenance_per_year;     // per node: unplanned host maintenance
  std::optional<double> planned_maintenance_per_year;  // per node: planned maintenance (job stops)
  std::optional<double> detection_s;                   // from the failure to the job's stop
  std::optional<double> reschedule_s;                  // a spare node swapped in and the job rescheduled
  std::optional<double> repair_s;         // a failed node back in the pool (without a spare, the job waits)
  std::optional<double> process_start_s;  // processes started, framework initialised
  std::optional<double> nccl_init_s;      // communicators initialised
  int spare_nodes = 0;                    // idle nodes that replace failed ones
  std::optional<double> straggler_cv;     // per-GPU step-time slowdown: lognormal coefficient of variation

  bool operator==(const ReliabilitySpec&) const = default;
};

// Where checkpoints go (sim/training_run/checkpoint_model.hpp). kind: parallel_fs | object_store |
// local_nvme_async (written to local NVMe, uploaded in the background: only the snapshot stalls).
struct StorageSpec {
  std::string kind = "parallel_fs";
  std::optional<double> aggregate_GBps;  // the storage system's write (and read) bandwidth
  std::optional<double> per_node_GBps;   // what one node can write
  std::optional<double> snapshot_GBps;   // per GPU, device to host memory (asynchronous checkpoints)
  bool asynchronous = false;             // only the snapshot to host memory stalls the step

  bool operator==(const StorageSpec&) const = default;
};

// A value the spec left out and the reader filled in from what the hardware implies (the GPU's NVLink
// generation, the fabric's transport): the report's provenance lists them. Provenance, not part of the
// cluster: two specs describing the same cluster compare equal however their values were obtained.
struct DerivedDefault {
  std::string key;    // JSON pointer of the filled key: "/node/scale_up/generation"
  std::string value;  // as JSON text: "\"nvlink4\"", "450"
  std::string why;    // "h100-sxm5-80gb carries NVLink 4 (NVIDIA H100 datasheet)"
};

struct DerivedDefaults {
  std::vector<DerivedDefault> items;
  bool operator==(const DerivedDefaults& /*other*/) const { return true; }
};

struct ClusterSpec {
  std::string name;
  std::string description;           // free text: what the spec models and where its figures come from
  std::vector<std::string> sources;  // where the figures come from: datasheets, cloud documentation (URLs)
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
  ReliabilitySpec reliability;
  StorageSpec storage;
  std::string source_file;           // where the spec came from, for error messages
  DerivedDefaults derived_defaults;  // what the reader filled in from the hardware, in reading order

  int gpu_count() const { return nodes * node.gpus; }
  // GPUs of one NVLink domain (scale_up.domain_gpus, or node.gpus when 0).
  int domain_gpus() const { return node.scale_up.domain_gpus > 0 ? node.scale_up.domain_gpus : node.gpus; }
  int nodes_per_domain() const { return domain_gpus() / node.gpus; }
  int nodes_per_rack() const { return fabric.nodes_per_rack > 0 ? fabric.nodes_per_rack : nodes_per_domain(); }
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
