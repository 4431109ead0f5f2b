#pragma once
// Replays an execution graph on a network backend, event by event.
//
// Semantics (shared by every backend): an op starts when its dependencies are done and its stream
// is free (streams are in-order queues); a compute op lasts what the GPU kernel model says; a
// collective starts once every rank of its communicator has reached it (ops of one communicator are
// matched in issue order), is planned by the collective algorithm, and its transfers go to the
// backend. A graph that can make no more progress with ops left is a deadlock: replay() throws a
// SimulationError saying which ranks wait on which op.
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/hardware/gpu_spec.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/network/network_profile.hpp"
#include "workloads/execution_graph.hpp"
#include "workloads/expert_routing.hpp"

namespace clustersim {

class Cluster;

// What a replay learnt that the next replays of the same graph on the same cluster can reuse (the
// clock solver replays a step several times): its traffic classes (traffic_classes.hpp) and, with a
// graph, the collective plans and point-to-point channels it formed them from (reused when the
// planning options are the same: algorithms, network profile, closed forms, expert routing). Shared
// through ReplayOptions::memo by the replays of one cluster (a memo is checked against the cluster's
// address only); a replay reuses the classes only when its batches of transfers are, transfer for
// transfer, those they were formed from, and forms them afresh otherwise. `graph`: the one graph
// every replay sharing the memo replays (it must outlive them); its per-op structure (successors,
// stream queues, kernel numbering) is then built by the first replay only, and its collective plans
// are lent to the next replay whose planning inputs (the options' network profile, algorithms,
// closed-form switches, expert routing) are equal. Null: not kept.
struct ReplayMemo;
std::shared_ptr<ReplayMemo> make_replay_memo(const ExecutionGraph* graph = nullptr);

struct ReplayOptions {
  // The algorithm of every collective ("auto": the selector), unless the communicator has its own.
  std::string collective_algorithm = "auto";
  std::map<std::string, std::string> algorithm_by_communicator;  // "dp" -> "ring"
  NetworkProfile network_profile = ideal_network_profile();
  // Collectives whose transfers all stay inside one NVSwitch node, or inside one fully connected
  // xGMI mesh node (AMD Instinct), are timed by their closed form (idle-fabric time) instead of the
  // backend: exact alone, optimistic when other traffic loads the same GPU ports (NVSwitch) or the
  // same pair's link (mesh) at the same time. Cuts the flows of tensor parallelism by orders of
  // magnitude; tests compare it with the exhaustive replay.
  bool closed_form_inside_nvswitch = true;
  // The same for the all-to-alls of the expert-parallel communicator (`expert_communicator`) across
  // nodes, when no route crosses a link between two fabric switches and the groups share no link
  // (DeepEP's rail-local RDMA stage under one leaf, NVLink forwarding): exact alone, optimistic where
  // pipeline or gradient traffic loads the same NICs at the same time (error in workloads/README.md).
  // Needs closed_form_inside_nvswitch.
  bool closed_form_edge_all_to_all = true;
  std::string expert_communicator = "ep";
  // The routing of the MoE layers' tokens, given to the expert communicator's all-to-alls (DeepEP's
  // deduplicated dispatch); experts 0: none.
  ExpertRouting expert_routing;
  // Host issue time per op (training.host_op_us): op k of a rank (program order) cannot start before
  // (k + 1) x host_op_s, the moment its CPU thread has issued it. 0: ops start when ready.
  double host_op_s = 0.0;
  // The graph's host synchronisation points (RankClass::host_syncs, the stack's host_syncs) change
  // this clock: at point j the host waits until every op before j of its rank has finished (at time
  // r_j), then issues op k >= j at r_j + (k - j + 1) x host_op_s (+ the pipeline instructions among
  // ops j..k), or later if the clock above says so; k is the last such point at or before it.
  // A fixed host cost before the step (the stack's step.fixed_s): no op starts before it, and op k
  // not before step_fixed_s + (k + 1) x host_op_s.
  double step_fixed_s = 0.0;
  // Host time of each pipeline transfer instruction (the stack's pipeline_instruction_us): every send
  // or recv on the communicator named `pipeline_communicator` costs the host this much more, on top
  // of its host_op_s. Op k is issued at step_fixed_s + (k + 1) x host_op_s + n_k x
  // pipeline_instruction_s, n_k the pipeline sends and recvs among ops 0..k of its rank; the host
  // never waits for the GPU, so a GPU-bound stage hides it and a host-bound one starts later.
  double pipeline_instruction_s = 0.0;
  std::string pipeline_communicator = "pp";
  // Measured host issue times (a PyTorch trace replayed with its host, workloads/measured_host.hpp):
  // per rank class, per op, the time its CPU had issued it; no op starts earlier. Empty: none.
  std::vector<std::vector<double>> issue_s;
  // The kernel model's time of a compute op is multiplied by its class's factor (the stack's
  // kernel_time_scale, indexed by KernelClass); measured durations (traces) are kept as they are.
  std::array<double, kKernelClassCount> kernel_time_scale = {1, 1, 1, 1, 1, 1, 1};
  // Simulate one transfer per class of identical transfers where that is exact (traffic_classes.hpp:
  // static d_mod_k routing, both backends); false: every transfer (the tests compare).
  bool traffic_classes = true;
  // The same under adaptive routing, on a backend that can start over (NetworkBackend::restart:
  // analytical; flow through replay() with fresh backends, each attempt in a child process): each launch routed against
  // its own load when the classes are formed, and checked when it starts against the load then in flight
  // (traffic_classes.hpp: the adaptive choices its routes made must be those of the exhaustive replay); where a
  // channel's message fails its check the replay starts over with a variant of it routed against that load, where a
  // collective's phase does it starts over with every transfer. Exact. Off: adaptive routing replays every transfer.
  bool adaptive_traffic_classes = true;
  std::shared_ptr<ReplayMemo> memo;  // null: nothing kept between replays
  // Record every op of up to this many rank classes (evenly spaced) for the timeline; 0: none.
  std::size_t timeline_classes = 0;
};

// One executed op of a recorded class, for the timeline (sim/report/timeline.hpp).
struct TimelineSlice {
  std::size_t rank_class = 0;
  OpId op = 0;
  std::uint8_t stream = 0;
  double start_s = 0.0;  // compute: when it started; communication: when every peer had arrived
  double end_s = 0.0;
  std::string algorithm;   // collectives
  std::uint64_t flow = 0;  // send/recv: the id shared by the matched pair (0: none)
};

// Time accounting of one rank class (its representative rank).
struct ClassTimes {
  double finish_s = 0.0;
  double compute_s = 0.0;                // compute stream busy
  double exposed_communication_s = 0.0;  // communication while the compute stream is idle
  double idle_s = 0.0;                   // neither: waiting on other ranks or stages
  double host_wait_s = 0.0;              // neither, while a ready op waited for the host to issue it
  // Activity, for the power model (per rank of the class; sums of op durations):
  double tensor_s = 0.0;                // compute ops on tensor cores (gemm, attention)
  double low_precision_tensor_s = 0.0;  // the part of tensor_s in fp8, mxfp8 or nvfp4 ops
  double vector_s = 0.0;                // other compute ops (memory- or vector-bound)
  double communication_s = 0.0;         // union of the intervals with a transfer of this rank in flight
};

// One executed collective (all groups of one communicator at one sequence number).
struct CollectiveRecord {
  std::uint16_t communicator = 0;
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::string algorithm;
  std::string
      protocol;  // NCCL's wire protocol of the plan: LL, LL128, Simple; "userbuffers" (Communicator::userbuffers)
  int channels = 1;
  double bytes = 0.0;    // per rank buffer size
  double start_s = 0.0;  // every rank has arrived
  double end_s = 0.0;
  double exposed_s = 0.0;  // part of [start_s, end_s] when the critical class's compute stream is idle
};

// The point-to-point traffic of one communicator (send/recv pairs).
struct P2PRecord {
  std::size_t count = 0;  // matched pairs (each for every rank of the sending class)
  double bytes = 0.0;     // bytes per rank per pair, summed over pairs
  double time_s = 0.0;    // transfer times, summed over pairs
};

struct ReplayResult {
  double step_time_s = 0.0;
  std::vector<ClassTimes> classes;  // indexed like ExecutionGraph::classes()
  std::size_t critical_class = 0;   // the class that finishes last
  std::vector<CollectiveRecord> collectives;
  std::vector<double> link_bytes;   // per cluster link
  std::vector<double> link_busy_s;  // per cluster link: time with at least one transfer on it
  // [communicator][link] -> bytes that communicator's collectives put on the link (an empty vector
  // for a communicator that sent nothing over the network).
  std::vector<std::vector<double>> link_bytes_by_communicator;
  std::size_t transfers = 0;  // point-to-point transfers of the step (every copy)
  // The transfers handed to the backend: `transfers` unless one stood for each class of identical
  // transfers (ReplayOptions::traffic_classes).
  std::size_t transfers_simulated = 0;
  double p2p_bytes = 0.0;                     // bytes sent by send/recv ops, all ranks
  std::map<std::uint16_t, P2PRecord> p2p;     // by communicator
  std::vector<TimelineSlice> timeline;        // recorded classes' ops, in completion order
  std::vector<std::size_t> timeline_classes;  // the classes recorded
};

ReplayResult replay(const ExecutionGraph& graph, const Cluster& cluster, const GpuSpec& gpu, NetworkBackend& backend,
                    const ReplayOptions& options = {});

// A new backend of the replay's kind, for one attempt of it.
using NetworkBackendMaker = std::function<std::unique_ptr<NetworkBackend>()>;
// The same replay, where `backend` cannot start over (NetworkBackend::restart false: flow) but the
// traffic classes under adaptive routing may need it to: each attempt then runs in a child process
// (sim/core/child_process.hpp) on a backend `fresh` makes, seeded with the memo's classes and
// variants, and sends back its result or the variants of its failed checks for the next attempt;
// `backend` replays every transfer where the limits on restarts and variants are passed. Otherwise
// replay() above, on `backend`. The result is the exhaustive replay's either way.
ReplayResult replay(const ExecutionGraph& graph, const Cluster& cluster, const GpuSpec& gpu, NetworkBackend& backend,
                    const NetworkBackendMaker& fresh, const ReplayOptions& options);

}  // namespace clustersim
