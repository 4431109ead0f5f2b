#pragma once
// Interruptions of a synchronous training job: each cause's rate per component (reliability_spec.hpp)
// times the components of the built cluster. The counts are the cost model's bill of materials
// (sim/cost) and the power model's device list (NVSwitch chips), not counted again here. Any failure
// stops the whole job (it is synchronous); what it takes out until repaired decides whether a spare
// node is needed: a GPU, its HBM, a NIC, a host part, a cable or maintenance one node, a fabric switch
// the nodes under a leaf, software nothing.
#include <array>
#include <cstddef>
#include <vector>

#include "sim/report/report.hpp"
#include "sim/training_run/reliability_spec.hpp"

namespace clustersim {

// The cluster's components of each FailureComponent kind, indexed in the enum's order, and the nodes
// under one leaf switch (0 without a switched fabric), which a fabric switch failure takes out.
inline constexpr std::size_t kFailureComponents = static_cast<std::size_t>(FailureComponent::cable) + 1;

struct ComponentCounts {
  std::array<double, kFailureComponents> count{};  // gpus, nodes, nics, NVSwitch chips, fabric switches, cables
  double nodes_per_leaf = 0.0;
  double of(FailureComponent c) const { return count[static_cast<std::size_t>(c)]; }
  double& of(FailureComponent c) { return count[static_cast<std::size_t>(c)]; }
};

// The counts of a simulated step's report (its cost and power sections must be present).
ComponentCounts component_counts(const Report& report);

struct FailureCause {
  FailureRate rate;
  double components = 0.0;
  double per_s = 0.0;       // failures per second of the whole cluster
  double nodes_down = 0.0;  // nodes out of the job until repaired
};

std::vector<FailureCause> failure_causes(const std::vector<FailureRate>& rates, const ComponentCounts& counts);

// Summed rate of the causes, per second (planned maintenance included when `with_planned`).
double total_rate_per_s(const std::vector<FailureCause>& causes, bool with_planned = true);

}  // namespace clustersim
