#include "sim/training_run/reliability_spec.hpp"

#include <optional>

#include "sim/core/enum_names.hpp"

namespace clustersim {
namespace {

// The fit (one source, in sample). Llama 3 405B pre-training, "The Llama 3 Herd of Models",
// arXiv 2407.21783, Section 3.3.4 and Table 5: 466 job interruptions in a 54-day snapshot, 47 planned
// and 419 unexpected, on 16,384 H100 GPUs (2,048 servers of 8 GPUs, one 400 Gb/s RoCE NIC per GPU).
// Table 5 counts (unexpected): faulty GPU 148, GPU HBM3 memory 72, software bug 54, network switch /
// cable 35, host maintenance (unplanned) 32, GPU SRAM memory 19, GPU system processor 17, NIC 7,
// NCCL watchdog timeouts 7, silent data corruption 6, GPU thermal interface + sensor 6, SSD 3, power
// supply 3, server chassis 2, IO expansion board 2, dependency 2, CPU 2, system memory 2 (sum 419).
// (The table prints 30.1 % beside the 148 faulty GPUs, which is 148 / 466 rounded oddly; 148 / 419 is
// 35.3 %: the counts are used, not the percentages.)
// Each cause's rate = its count / (the components of that kind / 54 days): failures per component-year.
constexpr double kLlama3Years = 54.0 / 365.25;
constexpr double kLlama3Gpus = 16384.0;
constexpr double kLlama3Nodes = 2048.0;
constexpr double kLlama3Nics = 16384.0;
// Scale-out cables of the Llama-3-like cluster as clustersim builds it
// (calibration/time_to_train/llama3-405b-cluster.json: 16,384 GPU-leaf, leaf-spine and spine-core
// cables of a 3-tier Ethernet fat tree, as the cost model's bill of materials counts them).
constexpr double kLlama3Cables = 49152.0;

constexpr double per_year(double count, double components) {
  return count / (components * kLlama3Years);
}

// GPU: faulty GPU (NVLink included, the paper says) 148 + SRAM 19 + system processor 17 + thermal
// interface and sensor 6 + silent data corruption 6 = 196.
constexpr double kGpuPerYear = per_year(196.0, kLlama3Gpus);
constexpr double kHbmPerYear = per_year(72.0, kLlama3Gpus);
// Software: software bug 54 + NCCL watchdog timeouts 7 + dependency 2 = 63, counted per node.
constexpr double kSoftwarePerYear = per_year(63.0, kLlama3Nodes);
constexpr double kLinkPerYear = per_year(35.0, kLlama3Cables);  // network switch / cable
constexpr double kHostMaintenancePerYear = per_year(32.0, kLlama3Nodes);
// Host: SSD 3 + power supply 3 + chassis 2 + IO expansion board 2 + CPU 2 + system memory 2 = 14.
constexpr double kHostPerYear = per_year(14.0, kLlama3Nodes);
constexpr double kNicPerYear = per_year(7.0, kLlama3Nics);
constexpr double kPlannedPerYear = per_year(47.0, kLlama3Nodes);  // 466 - 419 planned interruptions

// Restart phases: assumptions (no published breakdown for this run; docs/time_to_train.md).
constexpr double kDetectionS = 300.0;  // between a heartbeat's seconds and PyTorch's 600 s NCCL timeout
constexpr double kRescheduleS = 300.0;
constexpr double kRepairS = 4.0 * 3600.0;
constexpr double kProcessStartS = 120.0;
constexpr double kNcclInitS = 60.0;

constexpr const char* kFit = "Llama 3 fit (arXiv 2407.21783 Table 5, 54 days, 16,384 H100)";

FailureRate rate(const char* cause, FailureComponent c, const std::optional<double>& given, double fit,
                 bool planned = false, const char* fit_source = kFit) {
  return {cause, c, given.value_or(fit), planned, given ? "cluster spec" : fit_source};
}

constexpr EnumName<FailureComponent> kFailureComponentNames[] = {
    {FailureComponent::gpu, "gpu"},
    {FailureComponent::node, "node"},
    {FailureComponent::nic, "nic"},
    {FailureComponent::nvswitch_chip, "nvswitch_chip"},
    {FailureComponent::fabric_switch, "fabric_switch"},
    {FailureComponent::cable, "cable"},
};

}  // namespace

const char* to_string(FailureComponent c) {
  return name_of(kFailureComponentNames, c);
}

std::vector<FailureRate> failure_rates(const ReliabilitySpec& s) {
  using C = FailureComponent;
  constexpr const char* kCounted = "0: Llama 3 counts it with another cause (docs/time_to_train.md)";
  return {
      rate("gpu", C::gpu, s.gpu_per_year, kGpuPerYear),
      rate("hbm", C::gpu, s.hbm_per_year, kHbmPerYear),
      rate("software", C::node, s.software_per_year, kSoftwarePerYear),
      rate("link", C::cable, s.link_per_year, kLinkPerYear),
      rate("host_maintenance", C::node, s.host_maintenance_per_year, kHostMaintenancePerYear),
      rate("host", C::node, s.host_per_year, kHostPerYear),
      rate("nic", C::nic, s.nic_per_year, kNicPerYear),
      rate("nvswitch", C::nvswitch_chip, s.nvswitch_per_year, 0.0, false, kCounted),
      rate("switch", C::fabric_switch, s.switch_per_year, 0.0, false, kCounted),
      rate("planned_maintenance", C::node, s.planned_maintenance_per_year, kPlannedPerYear, true),
  };
}

RestartTimes restart_times(const ReliabilitySpec& s) {
  RestartTimes r;
  r.detection_s = s.detection_s.value_or(kDetectionS);
  r.reschedule_s = s.reschedule_s.value_or(kRescheduleS);
  r.repair_s = s.repair_s.value_or(kRepairS);
  r.process_start_s = s.process_start_s.value_or(kProcessStartS);
  r.nccl_init_s = s.nccl_init_s.value_or(kNcclInitS);
  r.spare_nodes = s.spare_nodes;
  return r;
}

double straggler_cv(const ReliabilitySpec& s) {
  return s.straggler_cv.value_or(0.0);
}

}  // namespace clustersim
