#include "sim/serving/serving_cost.hpp"

#include "sim/cost/cost_model.hpp"
#include "sim/cost/price_catalogue.hpp"
#include "sim/power/power_catalogue.hpp"

namespace clustersim {

ServingCost serving_cost(const ServingSummary& s, int gpus, const GpuSpec& gpu, const ClusterSpec& cluster) {
  const GpuPowerModel power = gpu_power_model(gpu);
  const Price server = server_price_per_gpu(gpu.id, power.tdp_w);
  ServingCost c;
  c.gpus = gpus;
  c.gpu_power_w = power.idle_w + s.gpu_busy_fraction * (power.tdp_w - power.idle_w);
  const double per_gpu_it_w = c.gpu_power_w + power.host_w_per_gpu;
  c.it_power_w = gpus * per_gpu_it_w;
  c.facility_power_w = c.it_power_w * cluster.power.pue;
  c.energy_j = c.facility_power_w * s.makespan_s;
  if (s.output_tokens > 0) c.energy_per_output_token_j = c.energy_j / static_cast<double>(s.output_tokens);
  c.usd_per_gpu_hour = server.usd / (cluster.cost.amortization_years * kHoursPerYear) +
                       per_gpu_it_w * cluster.power.pue / 1000.0 * cluster.cost.electricity_usd_per_kwh;
  c.usd_per_hour = c.usd_per_gpu_hour * gpus;
  c.usd = c.usd_per_hour * s.makespan_s / 3600.0;
  if (s.output_tokens > 0) c.usd_per_million_output_tokens = c.usd / static_cast<double>(s.output_tokens) * 1e6;
  if (s.output_tokens + s.input_tokens > 0)
    c.usd_per_million_tokens = c.usd / static_cast<double>(s.output_tokens + s.input_tokens) * 1e6;
  c.power_source = power.source;
  c.price_source = server.source;
  return c;
}

}  // namespace clustersim
