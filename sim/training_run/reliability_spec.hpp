#pragma once
// The failure rates and restart figures a training run uses: the cluster spec's `reliability` block
// (topologies/cluster_spec.hpp) with every unset value replaced by its sourced default
// (docs/time_to_train.md, "Sources"). The rates are fitted on one run: Llama 3 405B's 419 unexpected
// interruptions in 54 days on 16,384 H100 (arXiv 2407.21783, Table 5).
#include <string>
#include <vector>

#include "topologies/cluster_spec.hpp"

namespace clustersim {

// What a failure rate is counted per (failure_model.hpp counts them in the built cluster).
enum class FailureComponent { gpu, node, nic, nvswitch_chip, fabric_switch, cable };
const char* to_string(FailureComponent c);

struct FailureRate {
  std::string cause;  // "gpu", "hbm", "software", ...
  FailureComponent component = FailureComponent::gpu;
  double per_year = 0.0;  // failures per component per year
  bool planned = false;   // planned maintenance: a checkpoint is taken first, no work is lost
  std::string source;     // "Llama 3 fit: ..." or "cluster spec"
};

// Every cause, in the order of Llama 3's table (unexpected first, planned maintenance last).
std::vector<FailureRate> failure_rates(const ReliabilitySpec& spec);

// The restart's phases, seconds (defaults are assumptions, docs/time_to_train.md).
struct RestartTimes {
  double detection_s = 0.0;
  double reschedule_s = 0.0;
  double repair_s = 0.0;
  double process_start_s = 0.0;
  double nccl_init_s = 0.0;
  int spare_nodes = 0;
  // detection + reschedule + process start + NCCL init (the checkpoint load is added by the caller)
  double fixed_s() const { return detection_s + reschedule_s + process_start_s + nccl_init_s; }
};
RestartTimes restart_times(const ReliabilitySpec& spec);

// The stragglers' coefficient of variation (0 when not given: no straggler inflation).
double straggler_cv(const ReliabilitySpec& spec);

}  // namespace clustersim
