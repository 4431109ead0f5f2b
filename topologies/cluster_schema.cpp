#include "topologies/cluster_schema.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/spec_schema.hpp"
#include "topologies/cluster_schema_io.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/fabric_transport.hpp"
#include "topologies/node_builder.hpp"
#include "topologies/scale_up_generation.hpp"

namespace clustersim {
namespace {

// Plausibility bounds, not model figures: they refuse unit mistakes and values that would overflow a
// step's power, energy or cost to infinity (docs/specs.md).
constexpr double kMaxDeviceW = 1e5;    // one device (a GPU, a switch, a host share): 100 kW
constexpr double kMaxPue = 10.0;       // data centres run 1.1 to 2
constexpr double kMaxUsdPerKwh = 1e3;  // electricity
// One priced item (a GPU's share of a server, a NIC, a switch port, a cable): at most 10 million (a
// server's share of a GPU costs about 3e4 $); 1e308 gave an infinite bill and `null` in the report.
constexpr double kMaxItemUsd = 1e7;
constexpr double kMaxClusterUsd = 1e13;  // other capex or yearly operations of one cluster
constexpr double kMaxAmortizationYears = 100;
constexpr double kMaxFailuresPerYear = 1e4;  // one device failing about hourly
constexpr double kMaxRestartS = 1e7;         // about four months
constexpr double kMaxStorageGBps = 1e7;      // 10 PB/s

using Row = SchemaRow<ClusterSpec>;

template <auto... Members>
Row row(SpecField field, std::string_view omitted_when = {}) {
  return schema_row<ClusterSpec, Members...>(std::move(field), omitted_when);
}

// An optional power of one device, in watts: the power catalogue's value when left out.
SpecField watts(std::string_view path, std::string_view doc) {
  return number_field(path, false, NumberRange::between(0.0, kMaxDeviceW), "", "power catalogue", "W", doc);
}

// An optional price in US dollars: the price catalogue's when left out.
SpecField price(std::string_view path, std::string_view doc) {
  return number_field(path, false, NumberRange::between(0.0, kMaxItemUsd), "", "price catalogue", "USD", doc);
}

// A failure rate of one component kind, failures per device per year: the Llama 3 fit when left out.
SpecField failure_rate(std::string_view path, std::string_view doc) {
  return number_field(path, false, NumberRange::between(0.0, kMaxFailuresPerYear), "", "Llama 3 fit", "1/year", doc);
}

// A restart phase in seconds: sim/training_run's default (sourced there) when left out.
SpecField seconds(std::string_view path, std::string_view doc) {
  return number_field(path, false, NumberRange::between(0.0, kMaxRestartS), "", "time_to_train.md", "s", doc);
}

// A storage bandwidth in GB/s; 0 is refused where checkpoints are written (sim/training_run).
SpecField storage_bandwidth(std::string_view path, std::string_view doc) {
  return number_field(path, false, NumberRange::between(0.0, kMaxStorageGBps), "", "time_to_train.md", "GB/s", doc);
}

std::vector<std::string> storage_kinds() {
  return {"parallel_fs", "object_store", "local_nvme_async"};
}

constexpr std::string_view kGenerationDoc =
    "the GPU implies it when left out: V100 SXM `nvlink2`, A100 SXM `nvlink3` (no NVLS), H100/H200 SXM "
    "`nvlink4` and B200/GB200/B300/GB300 `nvlink5` (NVSwitch with NVLS), MI300X/MI325X `xgmi3` and MI355X `xgmi4` "
    "(type "
    "`xgmi_mesh`: 7 Infinity Fabric links per GPU), L4 `pcie4`, H100 PCIe `pcie5` (type `pcie`); an "
    "inline GPU uses its `base`; the report's `provenance.derived_defaults` lists what was filled in. It "
    "fills `bandwidth_GBps` and `latency_us` from the vendors' figures "
    "(topologies/scale_up_generation.cpp) and bounds the NVSwitch domain (nvlink3: 16 GPUs, nvlink4: "
    "256, nvlink5: 576)";
constexpr std::string_view kNicsDoc =
    "GPU g uses NIC g x nics / gpus; with more NICs than GPUs (AWS p5: 32 for 8 GPUs) GPU g owns NICs g "
    "k .. g k + k - 1 (k = nics / gpus) and every transfer it sends to another node is striped over them "
    "(lane l leaves through its NIC g k + l and arrives through the peer's NIC of that lane), as NCCL's "
    "network plugins stripe a GPU's messages over its NICs; `pcie_switches` = `gpus` puts each GPU and "
    "its NICs under one PCIe switch (its x16 link bounds them together)";
constexpr std::string_view kRoutingDoc =
    "how switches choose among equal-cost paths: `d_mod_k` by the destination's NIC number (static "
    "InfiniBand subnet-manager routing of fat-trees, D-mod-K: shift permutations such as one ring never "
    "collide, but sub-rings that target the same leaf port do); `adaptive` the link carrying the fewest "
    "transfers when a transfer starts, ties as `d_mod_k` (InfiniBand adaptive routing, on in NVIDIA's "
    "Quantum fabrics; identical to `d_mod_k` on an idle fabric); `ecmp` by a hash of each flow "
    "(Ethernet; flows can collide); `spray` every flow's packets over all equal-cost links (EFA's SRD), "
    "which a flow model gives as the least loaded equal-cost link when the transfer starts: no flow "
    "collides with another while an equal-cost link is idle; `auto`: the transport's (listed in "
    "`provenance.derived_defaults`)";
constexpr std::string_view kTransportDoc =
    "what runs on the fabric (topologies/fabric_transport.cpp, each with its source): its routing is "
    "`fabric.routing`'s `auto` (InfiniBand and Spectrum-X adaptive, RoCE and TCPXO ECMP hashing, EFA "
    "spraying; `efa` is p5/p5e's EFA, `efa_v3` p5en's and later, which aws-ofi-nccl tunes apart) and its "
    "per-message latency, if any, is added to every step that crosses the fabric; implies `technology` "
    "when that is left out and must match it";
constexpr std::string_view kDevicesDoc =
    "`graph` only: extra devices; kind `leaf_switch` (default), `spine_switch`, `core_switch`, "
    "`nvswitch`, `pcie_switch`, `host_bridge`, `nic`; forwards true";
constexpr std::string_view kLinksDoc =
    "`graph` only: links between device names (`node0/gpu3`, `node1/nic0`, `node0/nvswitch`, or a "
    "`fabric.devices` name); bandwidth per direction (default `link_bandwidth_Gbps`), latency (default "
    "`link_latency_us`), technology (default `fabric.technology`), duplex true";

// ---- node, node.scale_up, fabric ----------------------------------------------------------------

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool contains(const std::vector<std::string>& items, std::string_view s) {
  return std::find(items.begin(), items.end(), s) != items.end();
}

void derive(DerivedDefaults& derived, const JsonReader& r, std::string_view key, const nlohmann::json& value,
            std::string why) {
  derived.items.push_back(DerivedDefault{r.path_of(key), value.dump(), std::move(why)});
}

NumberRange range_of(const SpecField& f) {
  return NumberRange{f.min_number, f.max_number, f.min_exclusive};
}

// An int member: the key's integer >= the field's minimum that fits an int; left out, the member keeps
// its initializer (the field's default).
template <auto... Members>
void read_int_member(JsonReader& r, const SpecField& f, ClusterSpec& s) {
  int& member = schema_member<Members...>(s);
  member = read_int(r, f.key(), member, static_cast<int>(f.min_integer));
}

// A key read together with another one (named in its row's comment).
void read_with_another_key(JsonReader& /*r*/, const SpecField& /*f*/, ClusterSpec& /*s*/) {}

// node.scale_up.type. Left out, an AMD Instinct GPU implies its Infinity Fabric mesh (the GPU carries an
// xgmi generation: MI300X, MI325X, MI355X platforms join their 8 GPUs point to point, no switch), listed
// in the spec's derived defaults; any other GPU takes the default, nvswitch.
void read_scale_up_type(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  ScaleUpSpec& s = spec.node.scale_up;
  if (r.has(f.key())) {
    s.type = r.choice(f.key(), f.choices());
    return;
  }
  const std::string gpu_id = gpu_catalogue_id(spec);
  if (scale_up_generation_of_gpu(gpu_id, "xgmi") != nullptr) {
    s.type = "xgmi_mesh";
    derive(spec.derived_defaults, r, f.key(), s.type,
           gpu_id +
               " joins the 8 GPUs of its platform by 7 Infinity Fabric links each, no switch "
               "(topologies/scale_up_generation.cpp)");
  } else {
    s.type = "nvswitch";
  }
}

// node.scale_up.generation. Left out, the generation is the one the GPU carries (an H100 SXM's
// NVSwitch is NVLink 4 with NVLS whether the spec says so or not); its figures then default the
// bandwidth and latency. Each value filled in that way is listed in the spec's derived defaults.
void read_scale_up_generation(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  ScaleUpSpec& s = spec.node.scale_up;
  const std::string gpu_id = gpu_catalogue_id(spec);
  const std::string_view technology = scale_up_technology_of_type(s.type);
  if (r.has(f.key())) {
    s.generation = r.choice(f.key(), f.choices());
    const ScaleUpGeneration* generation = find_scale_up_generation(s.generation);
    if (s.type == "none") r.fail(f.key(), "scale_up type none has no generation, got \"" + s.generation + "\"");
    if (generation->technology != technology)
      r.fail(f.key(), "scale_up type " + s.type + " needs " +
                          (technology == "pcie"   ? "a PCIe"
                           : technology == "xgmi" ? "an Infinity Fabric (xgmi)"
                                                  : "an NVLink") +
                          " generation, got \"" + s.generation + "\"");
  } else if (s.type == "nvswitch" || s.type == "nvlink_mesh" || s.type == "xgmi_mesh" || technology == "pcie") {
    // (Not nvlink_pairs: a bridge carries less than the GPU's NVLink generation.)
    const ScaleUpGeneration* generation = scale_up_generation_of_gpu(gpu_id, technology);
    if (generation != nullptr) {
      s.generation = generation->id;
      std::string why = (gpu_id.empty() ? std::string("the GPU") : gpu_id) + " carries " + s.generation;
      if (s.type == "nvswitch")
        why += generation->nvls ? ": its NVSwitch reduces in the switch (NVLS)" : ": its NVSwitch has no NVLS";
      if (s.type == "xgmi_mesh") why += ": 7 Infinity Fabric links per GPU, one to each peer, no switch";
      derive(spec.derived_defaults, r, f.key(), s.generation, why + " (topologies/scale_up_generation.cpp)");
    } else if (s.type == "nvswitch") {
      derive(spec.derived_defaults, r, f.key(), nullptr,
             "the GPU (" + (gpu_id.empty() ? std::string("inline, no catalogue base") : gpu_id) +
                 ") implies no NVLink generation: no NVLS; give node.scale_up.generation to enable it");
    }
  }
}

// A scale-up figure left out: the generation's, listed as derived.
double from_generation(JsonReader& r, ClusterSpec& spec, std::string_view key, const ScaleUpGeneration& generation,
                       double value, const char* what) {
  if (!r.has(key))
    derive(spec.derived_defaults, r, key, value,
           std::string(what) + " of " + std::string(generation.id) + ": " + std::string(generation.source));
  return value;
}

const ScaleUpGeneration* scale_up_generation_of(const ClusterSpec& spec) {
  const std::string& id = spec.node.scale_up.generation;
  return id.empty() ? nullptr : find_scale_up_generation(id);
}

// node.scale_up.bandwidth_GBps: required, unless a generation gives it or the type is none.
void read_scale_up_bandwidth(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  ScaleUpSpec& s = spec.node.scale_up;
  if (const ScaleUpGeneration* g = scale_up_generation_of(spec))
    s.bandwidth_GBps = r.number_or(
        f.key(), from_generation(r, spec, f.key(), *g, g->bandwidth_GBps, "per-GPU bandwidth per direction"),
        range_of(f));
  else if (s.type == "none")
    s.bandwidth_GBps = r.number_or(f.key(), 0.0, range_of(f));
  else
    s.bandwidth_GBps = r.number(f.key(), range_of(f));
}

void read_scale_up_latency(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  ScaleUpSpec& s = spec.node.scale_up;
  const ScaleUpGeneration* g = scale_up_generation_of(spec);
  s.latency_us = r.number_or(
      f.key(), g ? from_generation(r, spec, f.key(), *g, g->latency_us, "GPU-to-GPU latency (assumed)") : s.latency_us,
      range_of(f));
}

void read_domain_gpus(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  ScaleUpSpec& s = spec.node.scale_up;
  if (r.has(f.key()) && s.type != "nvswitch")
    r.fail(f.key(), "only scale_up type nvswitch has NVLink domains across nodes, this one is " + s.type);
  s.domain_gpus = read_int(r, f.key(), s.domain_gpus, static_cast<int>(f.min_integer));
}

// Keys that only some fabric types read: given to another type, they are refused (not ignored).
struct TypedKey {
  std::string_view key;
  std::vector<std::string> types;
};

const std::vector<TypedKey>& typed_fabric_keys() {
  static const std::vector<TypedKey> keys = {
      {"spine_radix", {"spine_leaf"}},
      {"spines", {"spine_leaf"}},
      {"dims", {"torus"}},
      {"link_bandwidth_Gbps", {"torus", "graph"}},
      {"groups", {"dragonfly"}},
      {"routers_per_group", {"dragonfly"}},
      {"global_links_per_router", {"dragonfly"}},
      {"devices", {"graph"}},
      {"links", {"graph"}},
  };
  return keys;
}

// Fabrics whose switches are built per plane.
bool has_planes(const std::string& type) {
  return type == "fat_tree" || type == "rail_optimized" || type == "spine_leaf" || type == "dragonfly";
}

std::string default_technology(const std::string& type) {
  if (type == "spine_leaf") return "ethernet";
  if (type == "torus") return "nvlink";
  return "infiniband";
}

// fabric.type, then the keys of other types refused.
void read_fabric_type(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  FabricSpec& fabric = spec.fabric;
  const std::vector<std::string> supported = f.choices();
  const std::string type = r.optional_string(f.key()).value_or(fabric.type);
  if (!contains(supported, type)) r.fail(f.key(), "expected one of " + join(supported) + ", got \"" + type + "\"");
  fabric.type = type;
  for (const TypedKey& k : typed_fabric_keys()) {
    if (r.has(k.key) && !contains(k.types, fabric.type))
      r.fail(k.key,
             "only fabric type " + join(k.types) + " takes " + std::string(k.key) + ", this fabric is " + fabric.type);
  }
}

void read_tiers(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  FabricSpec& fabric = spec.fabric;
  fabric.tiers = read_int(r, f.key(), fabric.tiers, static_cast<int>(f.min_integer));
  if ((fabric.type == "fat_tree" || fabric.type == "rail_optimized") && fabric.tiers != 2 && fabric.tiers != 3)
    r.fail(f.key(), "expected 2 or 3 tiers for a fat-tree, got " + std::to_string(fabric.tiers));
  if (fabric.type == "spine_leaf" && fabric.tiers != 2)
    r.fail(f.key(), "a spine_leaf fabric has 2 tiers, got " + std::to_string(fabric.tiers) +
                        " (fabric type fat_tree builds 3 tiers)");
}

void read_rail_optimized(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  FabricSpec& fabric = spec.fabric;
  fabric.rail_optimized = r.boolean_or(f.key(), fabric.type == "rail_optimized");
  if (fabric.type == "rail_optimized" && !fabric.rail_optimized)
    r.fail(f.key(), "fabric type rail_optimized is always rail-optimized, got false");
}

std::vector<std::string> technologies() {
  return {"infiniband", "ethernet", "nvlink"};
}

std::vector<std::string> routings() {
  return {"auto", "adaptive", "d_mod_k", "ecmp", "spray"};
}

// fabric.transport, the technology it implies when the spec gives none, and the routing: each value
// filled in is listed in the spec's derived defaults.
void read_transport(JsonReader& r, const SpecField& /*technology*/, ClusterSpec& spec) {
  FabricSpec& fabric = spec.fabric;
  const FabricTransport* transport = nullptr;
  if (r.has("transport")) {
    fabric.transport = r.choice("transport", fabric_transport_ids());
    transport = find_fabric_transport(fabric.transport);
  }
  if (transport != nullptr && !r.has("technology")) {
    fabric.technology = transport->technology;
    derive(spec.derived_defaults, r, "technology", fabric.technology,
           "transport " + fabric.transport + " runs on " + fabric.technology + " (topologies/fabric_transport.cpp)");
  } else {
    fabric.technology = r.choice_or("technology", technologies(), default_technology(fabric.type));
  }
  if (transport != nullptr && transport->technology != fabric.technology)
    r.fail("transport", "transport " + fabric.transport + " runs on " + std::string(transport->technology) +
                            ", this fabric's technology is " + fabric.technology);
  const bool switched = has_planes(fabric.type) || fabric.type == "graph";
  if (transport == nullptr && switched) {
    // Left "" in the spec (transport_in_effect() resolves it from the technology), listed as derived.
    if (const FabricTransport* d = default_fabric_transport(fabric.technology))
      derive(spec.derived_defaults, r, "transport", d->id,
             "the default transport of an " + fabric.technology + " fabric: " + std::string(d->summary));
  }
  fabric.routing = r.choice_or("routing", routings(), "auto");
  if (fabric.routing == "auto" && switched)
    derive(spec.derived_defaults, r, "routing", fabric.routing_in_effect(),
           "how transport " + fabric.transport_in_effect() + " spreads flows (topologies/fabric_transport.cpp)");
}

void read_sharp(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  FabricSpec& fabric = spec.fabric;
  fabric.sharp = r.boolean_or(f.key(), false);
  if (fabric.sharp && fabric.technology != "infiniband")
    r.fail(f.key(), "in-network reduction (SHARP) needs an infiniband fabric, this one is " + fabric.technology);
}

void read_planes(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  FabricSpec& fabric = spec.fabric;
  fabric.planes = read_int(r, f.key(), fabric.planes, static_cast<int>(f.min_integer));
  if (fabric.planes > f.max_integer)
    r.fail(f.key(), "expected at most " + std::to_string(f.max_integer) + " planes (a NIC port per plane), got " +
                        std::to_string(fabric.planes));
  if (fabric.planes > 1 && !has_planes(fabric.type)) {
    const std::string message = "fabric type " + fabric.type +
                                " has no planes (only switched fabrics: fat_tree, "
                                "rail_optimized, spine_leaf, dragonfly), got ";
    r.fail(f.key(), message + std::to_string(fabric.planes));
  }
  if (fabric.planes > 1 && spec.node.nics == 0) r.fail(f.key(), "planes join NICs, and node.nics is 0");
}

std::string only_dragonfly(const ClusterSpec& spec) {
  return spec.fabric.type == "dragonfly" ? "" : "is read by fabric type dragonfly only";
}

// A dragonfly's size: required for a dragonfly (the typed keys refuse it elsewhere).
template <auto Member>
void read_dragonfly_int(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  if (spec.fabric.type != "dragonfly") return;
  if (!r.has(f.key())) r.fail(f.key(), "required key is missing (" + std::string(f.doc) + ")");
  spec.fabric.*Member = read_int(r, f.key(), 0, static_cast<int>(f.min_integer));
}

std::vector<std::string> scale_up_type_names() {
  return scale_up_types();
}
std::vector<std::string> fabric_type_names() {
  return fabric_types();
}

Row custom(Row r, Row::Reader read, Row::Applicability applies = nullptr) {
  r.read = read;
  r.applies = applies;
  return r;
}

SpecField int_field(std::string_view path, bool stable, std::int64_t min, std::string_view default_json,
                    std::string_view default_doc, std::string_view doc) {
  return integer_field(path, stable, min, std::numeric_limits<int>::max(), default_json, default_doc, doc);
}

SpecField choice_field(std::string_view path, bool stable, std::vector<std::string> (*choices)(),
                       std::string_view default_json, std::string_view default_doc, std::string_view doc) {
  return with_known_values(spec_field(path, FieldType::choice, stable, default_json, default_doc, doc), choices);
}

// fabric.dims: required for a torus.
void read_dims(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  if (spec.fabric.type != "torus") return;
  const std::string_view key = f.key();
  if (!r.has(key)) r.fail(key, "required key is missing (the torus dimensions, e.g. [4, 4, 4])");
  const nlohmann::json& arr = r.array(key);
  if (arr.empty()) r.fail(key, "expected at least one dimension, got an empty array");
  std::vector<int> dims;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const nlohmann::json& v = arr[i];
    const std::string where = r.path_of(key) + "/" + std::to_string(i);
    const bool integral =
        v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
    if (!integral) throw SpecError(r.file(), where, "expected an integer >= 1, got " + describe_json(v));
    const double x = v.get<double>();
    if (x < 1 || x > 65535)
      // The value as written: x may not fit an integer (found by fuzz_cluster_spec: 4.4e90).
      throw SpecError(r.file(), where, "expected a torus dimension between 1 and 65535, got " + v.dump());
    dims.push_back(static_cast<int>(x));
  }
  spec.fabric.dims = std::move(dims);
}

std::vector<std::string> graph_device_kinds() {
  return {"nvswitch", "nic", "pcie_switch", "host_bridge", "leaf_switch", "spine_switch", "core_switch"};
}

// fabric.devices of a graph fabric.
void read_graph_devices(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  if (spec.fabric.type != "graph" || !r.has(f.key())) return;
  const std::size_t n = r.array(f.key()).size();
  for (std::size_t i = 0; i < n; ++i) {
    JsonReader e = r.element(f.key(), i);
    GraphDeviceSpec d;
    d.name = e.string("name");
    if (d.name.empty()) e.fail("name", "expected a device name, got the empty string");
    d.kind = e.choice_or("kind", graph_device_kinds(), d.kind);
    d.forwards = e.boolean_or("forwards", d.forwards);
    e.finish();
    spec.fabric.devices.push_back(std::move(d));
  }
}

// fabric.links of a graph fabric: required there.
void read_graph_links(JsonReader& r, const SpecField& f, ClusterSpec& spec) {
  const FabricSpec& fabric = spec.fabric;
  if (fabric.type != "graph") return;
  if (!r.has(f.key())) r.fail(f.key(), "required key is missing (the links of a graph fabric)");
  const std::size_t n = r.array(f.key()).size();
  const double default_Gbps =
      fabric.link_bandwidth_Gbps > 0 ? fabric.link_bandwidth_Gbps : spec.node.nic_bandwidth_Gbps;
  std::vector<GraphLinkSpec> out;
  for (std::size_t i = 0; i < n; ++i) {
    JsonReader e = r.element(f.key(), i);
    GraphLinkSpec l;
    l.src = e.string("src");
    l.dst = e.string("dst");
    if (l.src == l.dst) e.fail("dst", "expected a device other than the source, got \"" + l.dst + "\" twice");
    l.bandwidth_Gbps = e.number_or("bandwidth_Gbps", default_Gbps, NumberRange::between(kMinLinkGbps, kMaxLinkGbps));
    l.latency_us = e.number_or("latency_us", fabric.link_latency_us, NumberRange::between(0.0, kMaxLatencyUs));
    l.technology = e.choice_or("technology", {"nvlink", "pcie", "infiniband", "ethernet"}, fabric.technology);
    l.duplex = e.boolean_or("duplex", l.duplex);
    e.finish();
    out.push_back(std::move(l));
  }
  spec.fabric.links = std::move(out);
}

// A graph fabric's devices and links: written by cluster_spec_to_json itself, which keeps their
// members' order (a row's value is an unordered JSON object).
nlohmann::json written_by_hand(const ClusterSpec& /*spec*/) {
  return nullptr;
}

Row array_row(SpecField field, Row::Reader read) {
  Row r;
  r.field = std::move(field);
  r.get = &written_by_hand;
  r.read = read;
  return r;
}

const std::vector<Row>& rows() {
  using C = ClusterSpec;
  using P = PowerSpec;
  using K = CostSpec;
  using Q = PriceOverrides;
  using R = ReliabilitySpec;
  using S = StorageSpec;
  using N = NodeSpec;
  using U = ScaleUpSpec;
  using F = FabricSpec;
  static const std::vector<Row> table = {
      // node
      custom(row<&C::node, &N::gpus>(int_field("node.gpus", true, 1, "8", "", "GPUs per node")),
             &read_int_member<&C::node, &N::gpus>),
      custom(
          row<&C::node, &N::scale_up, &U::type>(choice_field(
              "node.scale_up.type", true, &scale_up_type_names, "\"nvswitch\"", "",
              "how GPUs are joined: NVSwitch domain; DGX-1 hybrid cube-mesh (8 GPUs, 6 NVLink bricks each); "
              "NVLink bridges between GPUs 2k and 2k+1; PCIe; nothing (a torus links them); `xgmi_mesh`: AMD "
              "Infinity Fabric, every GPU linked to every other of its node (8 GPUs: 7 links each), no switch; "
              "left out, an MI300X, MI325X or MI355X implies `xgmi_mesh` (listed in `provenance.derived_defaults`)")),
          &read_scale_up_type),
      custom(row<&C::node, &N::scale_up, &U::generation>(
                 with_type_doc(choice_field("node.scale_up.generation", false, &scale_up_generation_ids, "",
                                            "the GPU's (derived)", kGenerationDoc),
                               "`nvlink2` ... `nvlink5` \\| `xgmi3`, `xgmi4` \\| `pcie3` ... `pcie5`"),
                 "\"\""),
             &read_scale_up_generation),
      custom(row<&C::node, &N::scale_up, &U::bandwidth_GBps>(
                 number_field("node.scale_up.bandwidth_GBps", true, NumberRange::between(kMinPcieGBps, kMaxScaleUpGBps),
                              "", "required (unless `generation`, or type `none`)", "GB/s",
                              "per GPU, per direction (mesh: over its 6 bricks; xgmi_mesh: over its gpus - 1 links; "
                              "pairs: the bridge)"),
                 "0"),
             &read_scale_up_bandwidth),
      custom(row<&C::node, &N::scale_up, &U::latency_us>(
                 number_field("node.scale_up.latency_us", true, NumberRange::between(0.0, kMaxLatencyUs), "0",
                              "0 (or the generation's)", "us", "GPU to GPU through the domain")),
             &read_scale_up_latency),
      custom(row<&C::node, &N::scale_up, &U::domain_gpus>(
                 int_field("node.scale_up.domain_gpus", false, 1, "", "`node.gpus`",
                           "`nvswitch` only: GPUs of one NVLink domain, spanning domain_gpus / gpus consecutive nodes "
                           "(GB200 NVL72: 72 with 4 GPUs per node); `nodes` must be a multiple of that"),
                 "0"),
             &read_domain_gpus),
      custom(row<&C::node, &N::nics>(int_field("node.nics", true, 0, "8", "", kNicsDoc)),
             &read_int_member<&C::node, &N::nics>),
      row<&C::node, &N::nic_bandwidth_Gbps>(number_field("node.nic_bandwidth_Gbps", true,
                                                         NumberRange::between(kMinLinkGbps, kMaxLinkGbps), "400", "",
                                                         "Gb/s", "line rate per NIC per direction")),
      row<&C::node, &N::pcie_bandwidth_GBps>(
          number_field("node.pcie_bandwidth_GBps", false, NumberRange::between(kMinPcieGBps, kMaxPcieGBps), "64", "",
                       "GB/s", "one PCIe link per direction (GPU or NIC to its switch, switch to host)")),
      custom(row<&C::node, &N::pcie_switches>(with_type_doc(
                 int_field("node.pcie_switches", false, 0, "0", "",
                           "0: each GPU has a direct path to its NIC; S: GPUs and NICs under S PCIe switches (GPU g "
                           "under switch g x S / gpus) under a host bridge; required by `nvlink_mesh` and "
                           "`nvlink_pairs` (pairs without NVLink talk over PCIe)"),
                 "integer, 0 .. gpus")),
             &read_int_member<&C::node, &N::pcie_switches>),
      // fabric
      custom(row<&C::fabric, &F::type>(choice_field("fabric.type", true, &fabric_type_names, "\"fat_tree\"", "",
                                                    "`clustersim topology info` shows what a spec builds; keys of "
                                                    "another type are refused")),
             &read_fabric_type),
      custom(row<&C::fabric, &F::tiers>(with_type_doc(
                 int_field("fabric.tiers", true, 1, "2", "", "`fat_tree`, `rail_optimized`: 2 or 3; `spine_leaf`: 2"),
                 "integer")),
             &read_tiers),
      custom(row<&C::fabric, &F::switch_radix>(
                 int_field("fabric.switch_radix", true, 2, "64", "",
                           "ports per switch (leaves; spines and cores too unless `spine_radix`); dragonfly: router "
                           "ports")),
             &read_int_member<&C::fabric, &F::switch_radix>),
      row<&C::fabric, &F::oversubscription>(number_field("fabric.oversubscription", true, NumberRange::at_least(1.0),
                                                         "1.0", "", "",
                                                         "leaf down:up bandwidth (3-tier aggregation stays 1:1)")),
      custom(row<&C::fabric, &F::rail_optimized>(spec_field(
                 "fabric.rail_optimized", FieldType::boolean, true, "false", "false (true for `rail_optimized`)",
                 "NIC i of every node on rail i's leaves; rails joined by the spines")),
             &read_rail_optimized),
      row<&C::fabric, &F::link_latency_us>(number_field("fabric.link_latency_us", true,
                                                        NumberRange::between(0.0, kMaxLatencyUs), "0.6", "", "us",
                                                        "per fabric link (switch + cable)")),
      // technology, transport and routing are read together (read_transport: the transport implies the
      // technology), at the technology's row.
      custom(row<&C::fabric, &F::technology>(
                 choice_field("fabric.technology", true, &technologies, "\"infiniband\"",
                              "`infiniband` (`spine_leaf`: `ethernet`, `torus`: `nvlink`; a `transport`'s)",
                              "the link technology of the fabric")),
             &read_transport),
      custom(row<&C::fabric, &F::sharp>(
                 spec_field("fabric.sharp", FieldType::boolean, false, "false", "",
                            "the switches reduce in the network (InfiniBand SHARP); enables the `sharp` all-reduce")),
             &read_sharp),
      custom(
          row<&C::fabric, &F::routing>(choice_field("fabric.routing", false, &routings, "\"auto\"", "", kRoutingDoc)),
          &read_with_another_key),
      custom(row<&C::fabric, &F::planes>(integer_field(
                 "fabric.planes", false, 1, kMaxPlanes, "1", "",
                 "switched fabrics: independent copies of the fabric; every NIC has one port per plane at "
                 "nic_bandwidth_Gbps / planes")),
             &read_planes),
      custom(row<&C::fabric, &F::transport>(
                 choice_field("fabric.transport", false, &fabric_transport_ids, "",
                              "`infiniband` on InfiniBand, `roce` on Ethernet (derived)", kTransportDoc),
                 "\"\""),
             &read_with_another_key),
      custom(row<&C::fabric, &F::nodes_per_rack>(
                 int_field("fabric.nodes_per_rack", false, 1, "", "nodes of one NVLink domain",
                           "for cabling: copper inside a rack, optical (2 transceivers) between racks"),
                 "0"),
             &read_int_member<&C::fabric, &F::nodes_per_rack>),
      custom(row<&C::fabric, &F::spine_radix>(
                 int_field("fabric.spine_radix", false, 2, "", "`switch_radix`", "`spine_leaf` only: ports per spine"),
                 "0"),
             &read_int_member<&C::fabric, &F::spine_radix>),
      custom(row<&C::fabric, &F::spines>(
                 with_type_doc(int_field("fabric.spines", false, 1, "", "uplinks per leaf",
                                         "`spine_leaf` only: spine count; each leaf spreads its uplinks evenly over "
                                         "them"),
                               "integer, divides the uplinks"),
                 "0"),
             &read_int_member<&C::fabric, &F::spines>),
      custom(row<&C::fabric, &F::dims>(
                 with_type_doc(spec_field("fabric.dims", FieldType::array, false, "", "required for `torus`",
                                          "torus dimensions; their product is nodes x gpus"),
                               "array of integers >= 1"),
                 "[]"),
             &read_dims),
      row<&C::fabric, &F::link_bandwidth_Gbps>(
          number_field("fabric.link_bandwidth_Gbps", false, NumberRange::between(kMinLinkGbps, kMaxLinkGbps), "",
                       "`node.nic_bandwidth_Gbps`", "Gb/s", "`torus` links; default of `graph` links"),
          "0"),
      custom(row<&C::fabric, &F::groups>(int_field("fabric.groups", false, 2, "", "required for `dragonfly`",
                                                   "the number of dragonfly groups, >= 2")),
             &read_dragonfly_int<&FabricSpec::groups>, &only_dragonfly),
      custom(row<&C::fabric, &F::routers_per_group>(int_field("fabric.routers_per_group", false, 1, "",
                                                              "required for `dragonfly`",
                                                              "routers in each dragonfly group, >= 1")),
             &read_dragonfly_int<&FabricSpec::routers_per_group>, &only_dragonfly),
      custom(row<&C::fabric, &F::global_links_per_router>(int_field("fabric.global_links_per_router", false, 1, "",
                                                                    "required for `dragonfly`",
                                                                    "global links of each router, >= 1")),
             &read_dragonfly_int<&FabricSpec::global_links_per_router>, &only_dragonfly),
      array_row(with_type_doc(spec_field("fabric.devices", FieldType::array, false, "[]", "", kDevicesDoc),
                              "array of `{name, kind, forwards}`"),
                &read_graph_devices),
      array_row(
          with_type_doc(spec_field("fabric.links", FieldType::array, false, "", "required for `graph`", kLinksDoc),
                        "array of `{src, dst, bandwidth_Gbps, latency_us, technology, duplex}`"),
          &read_graph_links),
      // power, cost
      row<&C::power, &P::pue>(number_field("power.pue", true, NumberRange::between(1.0, kMaxPue), "1.3", "", "",
                                           "facility overhead: facility power / IT power")),
      row<&C::power, &P::gpu_tensor_w>(
          watts("power.gpu_tensor_w",
                "a GPU's power running tensor-core kernels ([power_and_cost.md](power_and_cost.md)); it sets the "
                "energy, not the clock under the power cap")),
      row<&C::power, &P::gpu_vector_w>(watts("power.gpu_vector_w", "a GPU's power running other kernels")),
      row<&C::power, &P::gpu_communication_w>(
          watts("power.gpu_communication_w", "a GPU's power while it only communicates")),
      row<&C::power, &P::gpu_overlap_communication_w>(
          watts("power.gpu_overlap_communication_w",
                "added to compute power while a collective overlaps it (capped at TDP)")),
      row<&C::power, &P::gpu_waiting_w>(watts("power.gpu_waiting_w", "a GPU's power while it waits")),
      row<&C::power, &P::host_w_per_gpu>(
          watts("power.host_w_per_gpu", "the server's CPUs, memory, fans, storage, supply losses, per GPU")),
      row<&C::power, &P::nvswitch_chip_w>(watts("power.nvswitch_chip_w", "constant power of each NVSwitch chip")),
      row<&C::power, &P::nic_w>(watts("power.nic_w", "constant power of each NIC")),
      row<&C::power, &P::switch_w>(watts("power.switch_w", "constant power of every fabric switch")),
      row<&C::power, &P::transceiver_w>(watts("power.transceiver_w", "constant power of each optical transceiver")),
      row<&C::cost, &K::electricity_usd_per_kwh>(number_field(
          "cost.electricity_usd_per_kwh", true, NumberRange::between(0.0, kMaxUsdPerKwh), "0.10", "", "", "")),
      row<&C::cost, &K::amortization_years>(number_field("cost.amortization_years", true,
                                                         NumberRange{0.0, kMaxAmortizationYears, true}, "4.0", "", "",
                                                         "lifetime over which the capital cost is spread")),
      row<&C::cost, &K::operations_usd_per_year>(
          number_field("cost.operations_usd_per_year", false, NumberRange::between(0.0, kMaxClusterUsd), "0.0", "", "",
                       "staff, support, space: added to the hourly cost and the TCO"),
          "0.0"),
      row<&C::cost, &K::other_capex_usd>(
          number_field("cost.other_capex_usd", false, NumberRange::between(0.0, kMaxClusterUsd), "0.0", "", "",
                       "storage, racks, installation: added to the capital cost"),
          "0.0"),
      row<&C::cost, &K::prices, &Q::server_usd_per_gpu>(
          price("cost.prices.server_usd_per_gpu", "a GPU server without its scale-out NICs, per GPU")),
      row<&C::cost, &K::prices, &Q::nic_usd>(price("cost.prices.nic_usd", "each scale-out NIC")),
      row<&C::cost, &K::prices, &Q::switch_usd_per_port>(
          price("cost.prices.switch_usd_per_port", "a fabric switch costs this x its radix")),
      row<&C::cost, &K::prices, &Q::copper_cable_usd>(price("cost.prices.copper_cable_usd", "each copper cable")),
      row<&C::cost, &K::prices, &Q::optical_cable_usd>(price("cost.prices.optical_cable_usd", "each optical cable")),
      row<&C::cost, &K::prices, &Q::transceiver_usd>(price("cost.prices.transceiver_usd", "each transceiver")),
      // reliability, storage: a training run's failures and checkpoints (sim/training_run)
      row<&C::reliability, &R::gpu_per_year>(
          failure_rate("reliability.gpu_per_year",
                       "per GPU: faulty GPU (NVLink included), its SRAM, system processor, thermal "
                       "interface, silent data corruption; the job stops, the node is replaced")),
      row<&C::reliability, &R::hbm_per_year>(failure_rate("reliability.hbm_per_year", "per GPU: its HBM")),
      row<&C::reliability, &R::nvswitch_per_year>(
          failure_rate("reliability.nvswitch_per_year", "per NVSwitch chip (Llama 3 counts NVLink with the GPU)")),
      row<&C::reliability, &R::nic_per_year>(failure_rate("reliability.nic_per_year", "per scale-out NIC")),
      row<&C::reliability, &R::switch_per_year>(failure_rate(
          "reliability.switch_per_year",
          "per fabric switch; a failure takes its attached nodes down (Llama 3 counts switches with cables)")),
      row<&C::reliability, &R::link_per_year>(
          failure_rate("reliability.link_per_year", "per scale-out cable (the cable and its optics)")),
      row<&C::reliability, &R::host_per_year>(failure_rate(
          "reliability.host_per_year", "per node: CPU, system memory, power supply, SSD, chassis, IO board")),
      row<&C::reliability, &R::software_per_year>(failure_rate(
          "reliability.software_per_year", "per node: software bugs, NCCL watchdog timeouts, dependencies")),
      row<&C::reliability, &R::host_maintenance_per_year>(
          failure_rate("reliability.host_maintenance_per_year", "per node: unplanned host maintenance")),
      row<&C::reliability, &R::planned_maintenance_per_year>(failure_rate(
          "reliability.planned_maintenance_per_year", "per node: planned maintenance (the job stops and restarts)")),
      row<&C::reliability, &R::detection_s>(seconds("reliability.detection_s", "from a failure to the job's stop")),
      row<&C::reliability, &R::reschedule_s>(
          seconds("reliability.reschedule_s", "a spare node swapped in and the job rescheduled")),
      row<&C::reliability, &R::repair_s>(
          seconds("reliability.repair_s", "a failed node back in the pool; without a spare the job waits for it")),
      row<&C::reliability, &R::process_start_s>(
          seconds("reliability.process_start_s", "processes started and the framework initialised")),
      row<&C::reliability, &R::nccl_init_s>(seconds("reliability.nccl_init_s", "communicators initialised")),
      custom(row<&C::reliability, &R::spare_nodes>(
                 int_field("reliability.spare_nodes", false, 0, "0", "", "idle nodes that replace failed ones"), "0"),
             &read_int_member<&C::reliability, &R::spare_nodes>),
      row<&C::reliability, &R::straggler_cv>(number_field(
          "reliability.straggler_cv", false, NumberRange::between(0.0, 10.0), "", "0.0", "",
          "per-GPU step-time slowdown, lognormal with this coefficient of variation; the synchronous step waits "
          "for the slowest GPU")),
      row<&C::storage, &S::kind>(
          choice_field("storage.kind", false, &storage_kinds, "\"parallel_fs\"", "",
                       "where checkpoints go: a parallel file system, an object store, or local NVMe uploaded in the "
                       "background (`local_nvme_async`: asynchronous)"),
          "\"parallel_fs\""),
      row<&C::storage, &S::aggregate_GBps>(storage_bandwidth(
          "storage.aggregate_GBps", "the storage system's write and read bandwidth, all nodes together")),
      row<&C::storage, &S::per_node_GBps>(storage_bandwidth("storage.per_node_GBps", "what one node can write")),
      row<&C::storage, &S::snapshot_GBps>(storage_bandwidth(
          "storage.snapshot_GBps", "per GPU, device to host memory: the stall of an asynchronous checkpoint")),
      row<&C::storage, &S::asynchronous>(
          spec_field("storage.asynchronous", FieldType::boolean, false, "false", "",
                     "only the snapshot to host memory stalls training; the write overlaps it"),
          "false"),
  };
  return table;
}

}  // namespace

int read_int(JsonReader& r, std::string_view key, int fallback, int min) {
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  const std::int64_t v = r.integer_or(key, fallback, min);
  if (v > kIntMax) r.fail(key, "expected an integer <= " + std::to_string(kIntMax) + ", got " + std::to_string(v));
  return static_cast<int>(v);
}

std::string gpu_catalogue_id(const ClusterSpec& spec) {
  if (!spec.gpu_id.empty()) return spec.gpu_id;
  if (spec.gpu_inline_json.empty()) return {};
  const nlohmann::json gpu = nlohmann::json::parse(spec.gpu_inline_json);
  const auto base = gpu.find("base");
  return base != gpu.end() && base->is_string() ? base->get<std::string>() : std::string{};
}

std::span<const SpecField> cluster_schema() {
  static const std::vector<SpecField> fields = schema_fields<ClusterSpec>(rows());
  return fields;
}

void read_cluster_fields(JsonReader& r, std::string_view section, ClusterSpec& spec) {
  read_schema_fields<ClusterSpec>(rows(), r, section, spec);
}

void write_cluster_fields(nlohmann::ordered_json& out, std::string_view section, const ClusterSpec& spec) {
  write_schema_fields<ClusterSpec>(rows(), out, section, spec);
}

}  // namespace clustersim
