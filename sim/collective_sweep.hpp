#pragma once
// Simulated nccl-tests: one collective over a set of ranks, swept over message sizes, with the
// columns nccl-tests prints (size, count, type, time, algbw, busbw), so a measured and a simulated
// table can be put side by side.
#include <optional>
#include <string>
#include <vector>

#include "sim/network/nccl_tests.hpp"  // parse_collective_kind, bus_factor (callers of the sweep use them)
#include "sim/network/network_profile.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim {

struct CollectiveSweepOptions {
  CollectiveKind kind = CollectiveKind::all_reduce;
  // Point-to-point instead of a collective (nccl-tests' sendrecv_perf): every rank of `ranks` sends
  // `bytes` to the rank `peer_offset` places after it in the list (mod n) and receives from the one
  // `peer_offset` places before it, all pairs at once; `kind` is ignored.
  bool send_recv = false;
  int peer_offset = 1;
  std::vector<int> ranks;  // the communicator, in order
  double min_bytes = 8;
  double max_bytes = 8.0 * (1 << 30);
  double step_factor = 2.0;
  std::vector<double> sizes;  // explicit sizes in bytes; when set, min/max/step are ignored
  int element_bytes = 4;      // float, as nccl-tests by default
  std::string fidelity = "flow";
  std::string algorithm = "auto";
  std::string network_profile = "auto";  // "auto": the profile fitted on the cluster's GPU, else ideal
};

struct CollectiveSweepRow {
  double bytes = 0.0;
  std::int64_t count = 0;  // elements
  std::string algorithm;
  std::string protocol;  // NCCL's wire protocol the simulator chose: LL, LL128, Simple ("" for send/recv)
  double time_s = 0.0;
  double algbw_Bps = 0.0;  // bytes / time
  double busbw_Bps = 0.0;  // algbw x the collective's bus factor (nccl-tests' PERFORMANCE.md)
};

// Parses "0-63", "0,8,16", "0-7,16-23" into ranks; checks them against `gpus` (out of range,
// duplicates, empty). Throws SpecError("--ranks", "", ...).
std::vector<int> parse_rank_list(const std::string& text, int gpus);
// Parses "8", "64K", "8M", "8G" (binary multiples, as nccl-tests), at most 1024G (2^40 bytes).
// Throws SpecError(option, "", ...).
double parse_byte_size(const std::string& text, const std::string& option);
// Whether --op names point-to-point send/recv ("send_recv", "sendrecv") rather than a collective.
bool is_send_recv_op(const std::string& text);

// A sweep's step factor: a number > 1 ("2", "1.5"). Throws SpecError("--step-factor ...", "", ...).
double parse_step_factor(const std::string& text);

// The sweep's options as the CLI and Python give them, checked (SpecError naming the option): `op`
// a collective (parse_collective_kind) or send_recv; `ranks` a rank list (none: every GPU of the
// cluster); sizes from `min_bytes` to `max_bytes` ("8", "64K", "1G") by `step_factor`, or exactly
// `sizes` when not empty; `peer_offset` for send_recv only; fidelity, algorithm and network profile
// when given (else their defaults).
struct CollectiveSweepRequest {
  std::string op = "all_reduce";
  std::optional<std::string> ranks;  // none: every GPU of the cluster
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  std::string step_factor = "2";
  std::vector<double> sizes;
  std::optional<int> peer_offset;
  std::optional<std::string> fidelity;         // none: CollectiveSweepOptions' default (flow)
  std::optional<std::string> algorithm;        // none: auto
  std::optional<std::string> network_profile;  // none: auto
};
CollectiveSweepOptions collective_sweep_options(const ClusterSpec& cluster, const CollectiveSweepRequest& request);

// The rows as the CLI's --json prints them: [{size_bytes, count, type, algorithm, time_us,
// algbw_GBps, busbw_GBps, protocol}, ...] (nccl-tests' columns, units in the names; protocol: NCCL's wire
// protocol the tuner chose, "" for send/recv).
std::string collective_rows_json(const std::vector<CollectiveSweepRow>& rows, int indent = 2);

// The network profile the sweep uses: options.network_profile, or for "auto" the one fitted on the
// cluster's GPU (network_profile_for_gpu).
std::string collective_sweep_profile_name(const ClusterSpec& cluster, const CollectiveSweepOptions& options);

// Runs the sweep in a child process (one simulation, the sizes one after another on an idle fabric).
std::vector<CollectiveSweepRow> simulate_collective_sweep(const ClusterSpec& cluster,
                                                          const CollectiveSweepOptions& options);
// The same in this process, with an explicit profile: only for backends that do not use SimGrid
// (analytical), e.g. inside a fitting loop.
std::vector<CollectiveSweepRow> run_collective_sweep_in_this_process(const ClusterSpec& cluster,
                                                                     const CollectiveSweepOptions& options,
                                                                     const NetworkProfile& profile);

}  // namespace clustersim
