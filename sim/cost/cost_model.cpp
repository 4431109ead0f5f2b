#include "sim/cost/cost_model.hpp"

#include <map>
#include <tuple>

#include "sim/cost/price_catalogue.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "topologies/cluster.hpp"
#include "topologies/topology_metrics.hpp"

namespace clustersim {
namespace {

constexpr double kSecondsPerHour = 3600.0;
constexpr double kBitsPerByte = 8.0;
constexpr const char* kOverride = "cluster spec (cost.prices)";

Price chosen(const Price& catalogue, const std::optional<double>& override_usd) {
  return override_usd ? Price{*override_usd, kOverride} : catalogue;
}

void add(std::vector<CostLine>& bom, std::string item, double count, const Price& p) {
  if (count <= 0) return;
  bom.push_back({std::move(item), count, p.usd, count * p.usd, p.source});
}

bool is_fabric_switch(DeviceKind k) {
  return k == DeviceKind::leaf_switch || k == DeviceKind::spine_switch || k == DeviceKind::core_switch;
}

}  // namespace

CostStats compute_cost(const CostInputs& in) {
  CostStats c;
  c.bill_of_materials = in.bill_of_materials;
  for (const CostLine& l : in.bill_of_materials)
    c.capex_usd += l.total_usd;
  c.capex_usd += in.other_capex_usd;
  if (in.other_capex_usd > 0)
    c.bill_of_materials.push_back({"other_capex", 1.0, in.other_capex_usd, in.other_capex_usd, "cluster spec"});
  c.electricity_usd_per_kwh = in.electricity_usd_per_kwh;
  c.amortization_years = in.amortization_years;
  const double lifetime_h = in.amortization_years * kHoursPerYear;
  c.amortized_usd_per_hour = lifetime_h > 0 ? c.capex_usd / lifetime_h : 0.0;
  c.energy_usd_per_hour = in.facility_avg_kw * in.electricity_usd_per_kwh;
  c.operations_usd_per_hour = in.operations_usd_per_year / kHoursPerYear;
  c.usd_per_hour = c.amortized_usd_per_hour + c.energy_usd_per_hour + c.operations_usd_per_hour;
  c.usd_per_step = c.usd_per_hour * in.step_time_s / kSecondsPerHour;
  c.usd_per_million_tokens = in.tokens_per_step > 0 ? c.usd_per_step / in.tokens_per_step * 1e6 : 0.0;
  c.tco_usd = c.capex_usd + (c.energy_usd_per_hour + c.operations_usd_per_hour) * lifetime_h;
  return c;
}

double design_capex_usd(const Cluster& cluster, const GpuSpec& gpu) {
  return compute_cost(cost_inputs(cluster, compute_metrics(cluster), gpu, 0.0, 0.0, 0.0)).capex_usd;
}

std::vector<CostLine> bill_of_materials(const Cluster& cluster, const TopologyMetrics& metrics, const GpuSpec& gpu) {
  const ClusterSpec& spec = cluster.spec();
  const PriceOverrides& o = spec.cost.prices;
  std::vector<CostLine> bom;
  add(bom, "gpu_server", cluster.gpu_count(), chosen(server_price_per_gpu(gpu.id, gpu.tdp_w), o.server_usd_per_gpu));

  long nics = 0;
  std::map<std::tuple<DeviceKind, LinkTechnology, double>, long> switches;
  const auto devices = cluster.devices();
  const auto links = cluster.links();
  for (std::size_t d = 0; d < devices.size(); ++d) {
    if (devices[d].kind == DeviceKind::nic) ++nics;
    const auto out = cluster.out_links(static_cast<int>(d));
    if (!is_fabric_switch(devices[d].kind) || out.empty()) continue;
    const Link& first = links[static_cast<std::size_t>(out.front())];
    ++switches[{devices[d].kind, first.technology, first.bandwidth_Bps * kBitsPerByte / 1e9}];
  }
  add(bom, "nic", static_cast<double>(nics), chosen(nic_price(spec.node.nic_bandwidth_Gbps), o.nic_usd));
  for (const auto& [key, count] : switches) {
    const auto& [kind, technology, speed_Gbps] = key;
    const int radix = kind == DeviceKind::spine_switch && spec.fabric.spine_radix > 0 ? spec.fabric.spine_radix
                                                                                      : spec.fabric.switch_radix;
    Price per_port = chosen(switch_price_per_port(to_string(technology), speed_Gbps), o.switch_usd_per_port);
    per_port.usd *= radix;
    per_port.source = std::to_string(radix) + " ports x price per port: " + per_port.source;
    add(bom, to_string(kind), static_cast<double>(count), per_port);
  }
  for (const CableCount& cable : metrics.cables) {
    const bool optical = cable.medium == "optical";
    const Price p = optical ? chosen(optical_cable_price(cable.speed_Gbps), o.optical_cable_usd)
                            : chosen(copper_cable_price(cable.speed_Gbps), o.copper_cable_usd);
    add(bom, optical ? "optical_cable" : "copper_cable", static_cast<double>(cable.count), p);
  }
  for (const TransceiverCount& t : metrics.transceivers)
    add(bom, "transceiver", static_cast<double>(t.count), chosen(transceiver_price(t.speed_Gbps), o.transceiver_usd));
  return bom;
}

CostInputs cost_inputs(const Cluster& cluster, const TopologyMetrics& metrics, const GpuSpec& gpu, double step_time_s,
                       double tokens_per_step, double facility_avg_kw) {
  const CostSpec& c = cluster.spec().cost;
  CostInputs in;
  in.bill_of_materials = bill_of_materials(cluster, metrics, gpu);
  in.other_capex_usd = c.other_capex_usd;
  in.step_time_s = step_time_s;
  in.tokens_per_step = tokens_per_step;
  in.facility_avg_kw = facility_avg_kw;
  in.electricity_usd_per_kwh = c.electricity_usd_per_kwh;
  in.amortization_years = c.amortization_years;
  in.operations_usd_per_year = c.operations_usd_per_year;
  return in;
}

}  // namespace clustersim
