#pragma once
// Cost of a cluster design and of a training step (docs/architecture.md, "Cost"; docs/power_and_cost.md).
//
//   capex            = sum of the bill of materials (count x unit price) + other_capex_usd
//   amortized $/h    = capex / (amortization_years x 8,766 h)
//   energy $/h       = facility power (kW, PUE included) x electricity $/kWh
//   operations $/h   = operations_usd_per_year / 8,766 h
//   $/h              = amortized + energy + operations;   $/step = $/h x step time / 3,600 s
//   $/million tokens = $/step / tokens per step x 1e6
//   TCO              = capex + (energy + operations) $/h x lifetime hours (the cluster runs this step
//                      all the time)
#include <vector>

#include "sim/report/report.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {

class Cluster;
struct GpuSpec;
struct TopologyMetrics;

inline constexpr double kHoursPerYear = 8766.0;  // 365.25 days

struct CostInputs {
  std::vector<CostLine> bill_of_materials;
  double other_capex_usd = 0.0;
  double step_time_s = 0.0;
  double tokens_per_step = 0.0;
  double facility_avg_kw = 0.0;  // PowerStats::cluster_avg_kw
  double electricity_usd_per_kwh = 0.0;
  double amortization_years = 1.0;
  double operations_usd_per_year = 0.0;
};

CostStats compute_cost(const CostInputs& inputs);

// What the built cluster is made of, priced: GPU servers (per GPU), NICs, fabric switches (whole
// switches of the spec's radix), copper and optical cables, transceivers; counts from the topology
// metrics and the cluster's devices, prices from the catalogue or the spec's cost.prices.
std::vector<CostLine> bill_of_materials(const Cluster& cluster, const TopologyMetrics& metrics, const GpuSpec& gpu);

// The capital cost of a built design (its bill of materials and cost.other_capex_usd), no step needed:
// what compute_cost's capex_usd is for any step on it.
double design_capex_usd(const Cluster& cluster, const GpuSpec& gpu);

// The inputs for a simulated step (cost spec of the cluster, the step's power).
CostInputs cost_inputs(const Cluster& cluster, const TopologyMetrics& metrics, const GpuSpec& gpu, double step_time_s,
                       double tokens_per_step, double facility_avg_kw);

}  // namespace clustersim
