#include "sim/training_run/failure_model.hpp"

#include <string_view>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

constexpr double kSecondsPerYear = 365.25 * 86400.0;

bool is_fabric_switch(std::string_view item) {
  return item == "leaf_switch" || item == "spine_switch" || item == "core_switch";
}

}  // namespace

ComponentCounts component_counts(const Report& report) {
  if (!report.cost || !report.power)
    throw SimulationError("time to train: the report has no cost or power section to count components from");
  ComponentCounts n;
  n.of(FailureComponent::gpu) = report.run.gpus;
  n.of(FailureComponent::node) = report.run.nodes;
  double leaves = 0.0;
  for (const CostLine& line : report.cost->bill_of_materials) {
    if (line.item == "nic") n.of(FailureComponent::nic) += line.count;
    if (is_fabric_switch(line.item)) n.of(FailureComponent::fabric_switch) += line.count;
    if (line.item == "leaf_switch") leaves += line.count;
    if (line.item == "copper_cable" || line.item == "optical_cable") n.of(FailureComponent::cable) += line.count;
  }
  for (const DeviceEnergy& d : report.power->by_device)
    if (d.device == "nvswitch_chip") n.of(FailureComponent::nvswitch_chip) += d.count;
  n.nodes_per_leaf = leaves > 0.0 ? n.of(FailureComponent::node) / leaves : 0.0;
  return n;
}

std::vector<FailureCause> failure_causes(const std::vector<FailureRate>& rates, const ComponentCounts& counts) {
  std::vector<FailureCause> out;
  for (const FailureRate& r : rates) {
    FailureCause c;
    c.rate = r;
    c.components = counts.of(r.component);
    c.per_s = r.per_year * c.components / kSecondsPerYear;
    switch (r.component) {
      case FailureComponent::fabric_switch:
        c.nodes_down = counts.nodes_per_leaf;
        break;
      case FailureComponent::node:
        c.nodes_down = r.cause == "software" ? 0.0 : 1.0;
        break;
      default:
        c.nodes_down = 1.0;
    }
    out.push_back(c);
  }
  return out;
}

double total_rate_per_s(const std::vector<FailureCause>& causes, bool with_planned) {
  double sum = 0.0;
  for (const FailureCause& c : causes)
    if (with_planned || !c.rate.planned) sum += c.per_s;
  return sum;
}

}  // namespace clustersim
