#pragma once
// Power and energy of one step of the whole cluster (docs/architecture.md, "Power"; docs/power_and_cost.md).
//
// IT energy = sum over GPU rank classes of ranks x gpu_energy_j (sim/power/gpu_energy.hpp)
//           + sum over the other devices of count x (static_w + (max_w - static_w) x busy) x T
// where busy is the fraction of the step the device's ports carried traffic (link busy time from
// the replay; 0 for hosts and optics, which draw a constant power). Facility energy = IT x PUE; the
// overhead is its own entry of the split, so the entries sum to the facility energy.
#include <string>
#include <vector>

#include "sim/power/power_catalogue.hpp"
#include "sim/report/report.hpp"

namespace clustersim {

class Cluster;
class ExecutionGraph;
struct ReplayResult;
struct TopologyMetrics;

struct RankClassActivity {
  std::string name;
  int ranks = 0;
  double tensor_s = 0.0;
  double vector_s = 0.0;
  double communication_s = 0.0;  // union of the intervals with a collective in flight
  double exposed_communication_s = 0.0;
  double low_precision_tensor_s = 0.0;  // the part of tensor_s in fp8, mxfp8 or nvfp4 kernels
};

// `count` devices of one kind, with the fraction of the step their ports were busy.
struct DeviceLoad {
  std::string device;  // "host", "nvswitch_chip", "nic", "leaf_switch", "transceiver", ...
  double count = 0.0;
  DevicePower power;
  double busy_fraction = 0.0;  // in [0, 1]
};

struct PowerInputs {
  double step_time_s = 0.0;
  double tokens_per_step = 0.0;
  double pue = 1.0;
  GpuPowerModel gpu;
  std::vector<RankClassActivity> classes;  // every GPU in exactly one class
  std::vector<DeviceLoad> devices;
};

PowerStats compute_power(const PowerInputs& inputs);

// The inputs of a simulated step: GPU activity per rank class from the replay, devices counted from
// the built cluster and its metrics, their figures from the power catalogue with the cluster spec's
// power overrides applied.
PowerInputs power_inputs(const Cluster& cluster, const TopologyMetrics& metrics, const GpuSpec& gpu,
                         const ExecutionGraph& graph, const ReplayResult& result, double tokens_per_step);

}  // namespace clustersim
