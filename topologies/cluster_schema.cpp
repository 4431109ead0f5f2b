#include "topologies/cluster_schema.hpp"

#include <vector>

#include "sim/core/spec_schema.hpp"
#include "topologies/cluster_schema_io.hpp"

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

const std::vector<Row>& rows() {
  using C = ClusterSpec;
  using P = PowerSpec;
  using K = CostSpec;
  using Q = PriceOverrides;
  static const std::vector<Row> table = {
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
  };
  return table;
}

}  // namespace

std::span<const SpecField> cluster_schema() {
  static const std::vector<SpecField> fields = schema_fields<ClusterSpec>(rows());
  return fields;
}

std::string cluster_schema_markdown() {
  return spec_fields_markdown(cluster_schema());
}

std::string cluster_schema_json() {
  return spec_fields_json(cluster_schema());
}

void read_cluster_fields(JsonReader& r, std::string_view section, ClusterSpec& spec) {
  read_schema_fields<ClusterSpec>(rows(), r, section, spec);
}

void write_cluster_fields(nlohmann::ordered_json& out, std::string_view section, const ClusterSpec& spec) {
  write_schema_fields<ClusterSpec>(rows(), out, section, spec);
}

}  // namespace clustersim
