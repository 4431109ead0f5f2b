#pragma once
// The report of one simulation (docs/architecture.md, "Report", stable keys), its JSON form and a readable text
// summary. Times in seconds, sizes in bytes, power in watts, money in US dollars.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/cluster_spec.hpp"
#include "workloads/memory_lines.hpp"

namespace clustersim {

struct Breakdown {
  double compute_s = 0.0;
  double exposed_communication_s = 0.0;  // communication while the compute stream is idle
  double pipeline_bubble_s = 0.0;        // neither computing nor communicating: waiting on other ranks
  double host_wait_s = 0.0;              // neither, while the next op waited for the host (training.host_op_us)
};

struct CommunicationStats {
  std::string group;       // communicator name: "dp", "tp", ...
  std::string collective;  // "all_reduce", ...
  std::string algorithm;   // "ring", ...
  std::string protocol;    // NCCL's wire protocol: "LL", "LL128", "Simple" ("" for point-to-point)
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

// Memory per GPU at the peak (workloads/memory_model.cpp): the lines the framework allocates
// (MemoryLines: weights ... workspace) sum to allocated_peak_bytes (torch.cuda.max_memory_allocated);
// + allocator_reserve_bytes = reserved_peak_bytes (max_memory_reserved); + cuda_context_bytes =
// peak_bytes_per_gpu (the process's use of the GPU). The lines are the memory model's footprint's own.
struct MemoryStats : MemoryLines {
  std::string peak_phase;  // when the peak is reached: loss, backward, optimizer ("" for a trace)
  double allocated_peak_bytes = 0.0;
  double reserved_peak_bytes = 0.0;
  double peak_bytes_per_gpu = 0.0;
};

// The figures of the memory split (every MemoryStats figure but the peak and the capacity) with their
// report keys ("memory.weights_bytes", ...), in the report's order: what a trace without memory events
// leaves unknown.
struct MemoryFigure {
  std::string key;
  double MemoryStats::*member;
};
std::vector<MemoryFigure> memory_split_figures();

// One kind of device in the energy split (docs/power_and_cost.md): GPUs, their hosts, NVSwitch
// chips, NICs, each switch tier, transceivers, and the facility overhead (PUE - 1 of the rest).
struct DeviceEnergy {
  std::string device;  // "gpu", "host", "nvswitch_chip", "nic", "leaf_switch", ..., "facility"
  double count = 0.0;  // devices of this kind (0 for the facility overhead)
  double avg_w = 0.0;  // average power of all of them together over the step
  double energy_per_step_j = 0.0;
  std::string basis;  // how the figure was obtained (catalogue source or rule)
};

// The GPUs of one rank class (ranks that run the same ops): where their step went and its energy.
struct GpuClassEnergy {
  std::string name;  // the execution graph's class name
  int ranks = 0;
  double tensor_s = 0.0;                    // gemm / attention kernels
  double vector_s = 0.0;                    // other (memory- or vector-bound) kernels
  double exposed_communication_s = 0.0;     // communicating, compute stream idle
  double overlapped_communication_s = 0.0;  // communicating under compute
  double waiting_s = 0.0;                   // none of these until the end of the step
  double avg_w_per_gpu = 0.0;
  double energy_per_step_j = 0.0;  // all ranks of the class
};

// Power and energy of one step. Facility figures include the PUE; `it_` figures do not.
struct PowerStats {
  double gpu_avg_w = 0.0;          // per GPU, averaged over the step and the GPUs
  double cluster_avg_kw = 0.0;     // facility power (IT x PUE), averaged over the step
  double energy_per_step_j = 0.0;  // facility energy of one step
  double it_avg_kw = 0.0;          // every device, without the facility overhead
  double peak_kw = 0.0;            // facility; every GPU at the highest-power activity it had in the step
  double energy_per_token_j = 0.0;
  double pue = 1.0;
  // The clock of the tensor-core kernels under the power cap (sim/power/step_clock.hpp): the power
  // they may draw while they run, the clock a large GEMM settles at, the fraction of the step the
  // limiting GPU class spends in them, and how the clock was set.
  double tensor_power_budget_w = 0.0;
  double gemm_clock_MHz = 0.0;
  double tensor_duty_cycle = 0.0;
  std::string clock_basis;
  bool clock_cap_modelled = true;       // false: every kernel at the boost clock (the GPU entry has no tensor_boost_W)
  bool clock_cap_prior = false;         // true: the clock under the cap is a prior, not fitted on this GPU
  std::vector<DeviceEnergy> by_device;  // sums to energy_per_step_j
  std::vector<GpuClassEnergy> gpu_classes;  // sums to the "gpu" entry of by_device
};

// One line of the bill of materials.
struct CostLine {
  std::string item;  // "gpu_server", "nic", "leaf_switch", "optical_cable", "transceiver", ...
  double count = 0.0;
  double unit_usd = 0.0;
  double total_usd = 0.0;
  std::string source;  // price source and date, or "cluster spec" for an override
};

struct CostStats {
  double capex_usd = 0.0;
  double usd_per_hour = 0.0;  // amortized capex + energy + operations, per hour of training
  double usd_per_step = 0.0;
  double usd_per_million_tokens = 0.0;
  double amortized_usd_per_hour = 0.0;  // capex / lifetime
  double energy_usd_per_hour = 0.0;     // facility power x electricity price
  double operations_usd_per_hour = 0.0;
  double electricity_usd_per_kwh = 0.0;
  double amortization_years = 0.0;
  double tco_usd = 0.0;  // capex + lifetime energy (running this step all the time) + lifetime operations
  std::vector<CostLine> bill_of_materials;
};

// One cause of interruptions of a training run (sim/training_run/failure_model.hpp).
struct InterruptionCause {
  std::string cause;          // "gpu", "hbm", "software", "link", ..., "planned_maintenance"
  std::string component;      // what is counted: "gpu", "node", "nic", "fabric_switch", "cable", ...
  double components = 0.0;    // how many of them the built cluster has
  double per_year = 0.0;      // failures per component per year
  double nodes_down = 0.0;    // nodes one failure takes out of the job until repaired (0: none)
  bool planned = false;       // planned maintenance (not an unexpected interruption)
  double expected = 0.0;      // rate x components x the mean wall-clock time of a run
  double mean_per_run = 0.0;  // the Monte Carlo's mean count
  std::string source;         // where the rate comes from
};

// The time, energy and cost of training a number of tokens with failures, checkpoints, restarts and
// stragglers (sim/training_run/time_to_train.hpp; docs/time_to_train.md). Per-run figures are the
// Monte Carlo's means unless named otherwise; each run keeps wall = useful + checkpoint + lost + restart.
struct TimeToTrainStats {
  double tokens = 0.0;
  double steps = 0.0;
  double step_time_s = 0.0;            // the simulated step
  double straggler_inflation = 1.0;    // the synchronous step's expected slowest-of-N factor
  double effective_step_time_s = 0.0;  // step_time_s x straggler_inflation
  double checkpoint_bytes = 0.0;       // weights + optimizer state of the whole model
  std::string storage_kind;
  bool asynchronous_checkpoints = false;
  double checkpoint_write_s = 0.0;  // bytes / min(aggregate, nodes x per node)
  double checkpoint_stall_s = 0.0;  // what one checkpoint stops training for
  double checkpoint_read_s = 0.0;
  double restart_s = 0.0;                 // detection + reschedule + process start + NCCL init + load
  double mtbf_s = 0.0;                    // of the job: 1 / the summed interruption rate
  double checkpoint_interval_s = 0.0;     // training time between checkpoints
  std::string checkpoint_interval_basis;  // "young_daly" or "set"
  double young_daly_interval_s = 0.0;     // sqrt(2 x stall x MTBF)
  int runs = 0;
  std::uint64_t seed = 0;
  double days_p10 = 0.0, days_p50 = 0.0, days_p90 = 0.0, days_mean = 0.0;
  double failure_free_days = 0.0;  // steps x step time, nothing lost
  double goodput = 0.0;            // useful / wall, mean over runs
  double useful_s = 0.0;
  double checkpoint_s = 0.0;
  double lost_s = 0.0;  // recomputation of the work since the last checkpoint
  double restart_total_s = 0.0;
  double interruptions_expected = 0.0;  // unexpected, from the rates and the mean wall time
  double interruptions_mean = 0.0;      // unexpected, the Monte Carlo's mean
  double planned_interruptions_mean = 0.0;
  double energy_mwh = 0.0;       // facility energy over the mean wall time
  double capex_share_usd = 0.0;  // amortized capital over the mean wall time
  double energy_usd = 0.0;
  double operations_usd = 0.0;
  double cost_usd = 0.0;
  std::vector<InterruptionCause> causes;  // most expected first
};

// Where the measured step time is expected, given the prediction: from the validation residuals of
// the runs nearest to this one (sim/validation/error_bars.hpp; docs/validation.md, "Error bars"). The
// serving metrics' intervals (metric_interval) are of this type too, so the bounds are in the unit of
// the metric whose interval it is, which its name carries (step_time_s, ttft_s: s; output_tokens_per_s:
// tokens/s); the report writes the step time's as step_time_interval_s.
struct IntervalNeighbours {
  std::string dataset;
  int rows = 0;
};
struct StepTimeInterval {
  double lo = 0.0;  // in the metric's unit (above)
  double hi = 0.0;
  // The basis: how many validation rows, from which datasets, how far (feature distance), the
  // quantiles of their step-time errors, the widening applied for the distance, and the rule.
  int rows = 0;
  std::vector<IntervalNeighbours> datasets;  // most rows first
  double mean_distance = 0.0;
  double max_distance = 0.0;
  double error_p5 = 0.0;  // step-time errors (predicted - measured) / measured of the neighbours
  double error_p50 = 0.0;
  double error_p95 = 0.0;
  double widening = 1.0;
  std::string rule;
};

struct Provenance {
  std::string fidelity;                   // "flow"
  std::string network;                    // what computed transfer times
  std::string calibration;                // which GPU parameters were used
  std::string stack;                      // the software stack assumed and where its profile comes from
  std::vector<std::string> extrapolated;  // models used outside their fitted domain
  // Values the cluster spec left out and the reader derived from the hardware (key, value, why).
  std::vector<DerivedDefault> derived_defaults;
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
  std::string stack;                     // training.stack (the default stack's id when not given); "" for a trace
  std::int64_t ops_simulated = 0;        // ops of the execution graph (each rank class once)
  std::int64_t transfers_simulated = 0;  // point-to-point flows handed to the network backend
  std::string trace;                     // "FORMAT PATH" when the workload is a trace, else empty
};

// A figure the run cannot know (a replayed trace that records no batch size, no GEMM shapes or no
// memory events): its value is NaN in C++ and Python and null in JSON, and `reason` says what the
// input lacks ("the trace has no ..."). `key` is the figure's JSON path ("tokens_per_s",
// "memory.peak_bytes_per_gpu", "power.energy_per_token_j").
struct UnknownFigure {
  std::string key;
  std::string reason;
};

struct Report {
  double step_time_s = 0.0;
  std::optional<StepTimeInterval> step_time_interval;  // none when no residuals are available
  double tokens_per_s = 0.0;
  double tflops_per_gpu = 0.0;  // model flops (no recompute) per second per GPU, in TFLOP/s
  double mfu = 0.0;             // model flops utilization: tflops_per_gpu / dense peak of the dtype
  Breakdown breakdown;
  std::vector<CommunicationStats> communication;
  std::vector<LinkStats> links;  // hottest first
  MemoryStats memory;
  std::optional<PowerStats> power;
  std::optional<CostStats> cost;
  std::optional<TimeToTrainStats> time_to_train;  // when a number of tokens was asked for
  Provenance provenance;
  RunInfo run;
  std::vector<UnknownFigure> unknown;  // the NaN figures and why (JSON: "unknown": {key: reason})

  // Marks the figure at `key` unknown (its value must be NaN) for `reason`.
  void mark_unknown(std::string key, std::string reason);
  // The reason the figure at `key` is unknown; empty when it is known.
  std::string unknown_reason(std::string_view key) const;

  // Compact, deterministic JSON (same report, same bytes). `indent` < 0: one line.
  std::string to_json(int indent = 2) const;
  static Report from_json(const std::string& text);
  // A readable summary for terminals.
  std::string to_text() const;
};

}  // namespace clustersim
