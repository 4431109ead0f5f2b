#pragma once
// Power, energy and cost of a serving run, from the GPUs' busy fraction and the power and price
// catalogues (sim/power, sim/cost):
//   GPU power      = idle_w + busy fraction x (tdp_w - idle_w)        (per GPU, the run's mean)
//   IT power       = GPUs x (GPU power + host_w_per_gpu)              (the servers; no fabric)
//   facility power = IT power x PUE (the cluster spec's power.pue)
//   energy         = facility power x makespan
//   $ / GPU-hour   = server price per GPU / (amortization_years x 8,766 h)
//                    + (GPU power + host_w_per_gpu) x PUE x electricity_usd_per_kwh / 1000
//   $ / hour       = $ / GPU-hour x GPUs                               (the deployment)
//   $ / M tokens   = $ / hour x makespan / 3,600 s / tokens x 10^6
// The fabric (NICs, switches, cables), operations and the idle GPUs of the cluster outside the
// deployment are not counted: these are the deployment's marginal figures.
#include <string>

#include "sim/hardware/gpu_spec.hpp"
#include "sim/serving/serving_metrics.hpp"
#include "topologies/cluster_spec.hpp"

namespace clustersim {

struct ServingCost {
  int gpus = 0;  // replicas x tp x pp
  double gpu_power_w = 0.0;
  double it_power_w = 0.0;
  double facility_power_w = 0.0;
  double energy_j = 0.0;
  double energy_per_output_token_j = 0.0;
  double usd_per_gpu_hour = 0.0;
  double usd_per_hour = 0.0;                   // the deployment: GPUs x usd_per_gpu_hour
  double usd = 0.0;                            // the run
  double usd_per_million_output_tokens = 0.0;  // the run's cost over its output tokens
  double usd_per_million_tokens = 0.0;         // over its input and output tokens
  std::string power_source;
  std::string price_source;
};

ServingCost serving_cost(const ServingSummary& summary, int gpus, const GpuSpec& gpu, const ClusterSpec& cluster);

}  // namespace clustersim
