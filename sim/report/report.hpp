#pragma once
// The report of one simulation (DESIGN.md, "Report", stable keys), its JSON form and a readable text
// summary. Times in seconds, sizes in bytes, power in watts, money in US dollars.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace clustersim {

struct Breakdown {
  double compute_s = 0.0;
  double exposed_communication_s = 0.0;  // communication while the compute stream is idle
  double pipeline_bubble_s = 0.0;        // neither computing nor communicating: waiting on other ranks
};

struct CommunicationStats {
  std::string group;       // communicator name: "dp", "tp", ...
  std::string collective;  // "all_reduce", ...
  std::string algorithm;   // "ring", ...
  double bytes = 0.0;      // summed per-rank buffer sizes of all calls
  std::int64_t count = 0;
  double time_s = 0.0;     // summed duration of the calls (all ranks arrived -> done)
  double exposed_s = 0.0;  // part of time_s during which the critical rank's compute stream was idle
};

struct LinkUser {
  std::string group;  // the communicator whose collectives sent the bytes
  double bytes = 0.0;
};

struct LinkStats {
  std::string id;    // "node0/gpu3->node0/nvswitch"
  std::string kind;  // nvlink | pcie | infiniband | ethernet
  double bytes = 0.0;
  double bandwidth_Bps = 0.0;
  double utilization = 0.0;     // bytes / (bandwidth * step time)
  double busy_s = 0.0;          // time with at least one transfer on the link
  std::vector<LinkUser> users;  // who put the bytes there, most first
};

struct MemoryStats {
  double weights_bytes = 0.0;
  double gradients_bytes = 0.0;
  double optimizer_bytes = 0.0;
  double activations_bytes = 0.0;
  double communication_buffers_bytes = 0.0;
  double framework_overhead_bytes = 0.0;
  double peak_bytes_per_gpu = 0.0;
  double capacity_bytes = 0.0;
  bool fits = true;
};

// Power and cost are filled by the power/cost milestone; until then they are absent (null in JSON).
struct PowerStats {
  double gpu_avg_w = 0.0;
  double cluster_avg_kw = 0.0;
  double energy_per_step_j = 0.0;
};

struct CostStats {
  double capex_usd = 0.0;
  double usd_per_hour = 0.0;
  double usd_per_step = 0.0;
  double usd_per_million_tokens = 0.0;
};

struct Provenance {
  std::string fidelity;                   // "flow"
  std::string network;                    // what computed transfer times
  std::string calibration;                // which GPU parameters were used
  std::vector<std::string> extrapolated;  // models used outside their fitted domain
};

struct RunInfo {
  std::string cluster;
  std::string workload;
  std::string gpu;
  int gpus = 0;
  int nodes = 0;
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  std::int64_t global_batch = 0;
  std::int64_t micro_batches = 0;
  int seq_len = 0;
  double parameters = 0.0;
  double model_flops_per_step = 0.0;
  double peak_flops_per_gpu = 0.0;
  std::string precision;
  std::int64_t ops_simulated = 0;        // ops of the execution graph (each rank class once)
  std::int64_t transfers_simulated = 0;  // point-to-point flows handed to the network backend
};

struct Report {
  double step_time_s = 0.0;
  double tokens_per_s = 0.0;
  double tflops_per_gpu = 0.0;  // model flops (no recompute) per second per GPU, in TFLOP/s
  double mfu = 0.0;             // model flops utilization: tflops_per_gpu / dense peak of the dtype
  Breakdown breakdown;
  std::vector<CommunicationStats> communication;
  std::vector<LinkStats> links;  // hottest first
  MemoryStats memory;
  std::optional<PowerStats> power;
  std::optional<CostStats> cost;
  Provenance provenance;
  RunInfo run;

  // Compact, deterministic JSON (same report, same bytes). `indent` < 0: one line.
  std::string to_json(int indent = 2) const;
  static Report from_json(const std::string& text);
  // A readable summary for terminals.
  std::string to_text() const;
};

}  // namespace clustersim
