#include "sim/simulate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "sim/collectives/collective_algorithm.hpp"
#include "sim/core/child_process.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/host_memory_tier.hpp"
#include "sim/hardware/memory_model.hpp"
#include "sim/hardware/precision_support.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/power/power_model.hpp"
#include "sim/power/step_clock.hpp"
#include "sim/replay/replay_engine.hpp"
#include "sim/report/timeline.hpp"
#include "sim/training_run/time_to_train.hpp"
#include "sim/validation/error_bars.hpp"
#include "topologies/cluster.hpp"
#include "topologies/topology_metrics.hpp"
#include "workloads/expert_routing.hpp"
#include "workloads/fp8_recipe.hpp"
#include "workloads/measured_host.hpp"
#include "workloads/optimizer_offload.hpp"
#include "workloads/software_stack.hpp"
#include "workloads/trace_format.hpp"
#include "workloads/transformer_generator.hpp"
#include "workloads/transformer_math.hpp"

namespace clustersim {
namespace {

// The backend whose replays solve the clock under the power cap: the fastest, and repeatable in one process.
constexpr const char* kClockSolverFidelity = "analytical";

constexpr std::size_t kLinksReported = 20;

GpuSpec resolve_gpu(const ClusterSpec& cluster) {
  if (!cluster.gpu_inline_json.empty()) return parse_gpu_spec(cluster.gpu_inline_json, cluster.source_file, "/gpu");
  return find_gpu(cluster.gpu_id, cluster.source_file, "/gpu");
}

const NetworkBackendEntry& resolve_backend(const std::string& fidelity) {
  if (const NetworkBackendEntry* e = find_network_backend(fidelity)) return *e;
  std::string known;
  for (const auto& e : network_backends())
    known += (known.empty() ? "" : ", ") + std::string(e.fidelity);
  throw SpecError("--fidelity", "", "expected one of " + known + ", got \"" + fidelity + "\"");
}

void check_algorithm(const std::string& name, const std::string& where) {
  if (name == kAutoAlgorithm || find_collective_algorithm(name) != nullptr) return;
  std::string known = std::string(kAutoAlgorithm);
  for (const auto& a : collective_algorithms())
    known += ", " + std::string(a.name);
  throw SpecError(where, "", "expected one of " + known + ", got \"" + name + "\"");
}

std::vector<CommunicationStats> communication_stats(const ExecutionGraph& graph, const ReplayResult& r) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, CommunicationStats> by_key;
  // Each (communicator, kind, algorithm, protocol) found once by its names; the records (tens of
  // thousands per step) then add to it without building them.
  std::map<std::tuple<std::uint16_t, CollectiveKind, std::string_view, std::string_view>, CommunicationStats*> found;
  for (const auto& rec : r.collectives) {
    auto [at, inserted] = found.try_emplace({rec.communicator, rec.kind, rec.algorithm, rec.protocol}, nullptr);
    if (inserted) {
      const std::string group = graph.communicators()[rec.communicator].name;
      at->second = &by_key[{group, to_string(rec.kind), rec.algorithm, rec.protocol}];
      at->second->group = group;
      at->second->collective = to_string(rec.kind);
      at->second->algorithm = rec.algorithm;
      at->second->protocol = rec.protocol;
    }
    CommunicationStats& s = *at->second;
    s.bytes += rec.bytes;
    s.count += 1;
    s.time_s += rec.end_s - rec.start_s;
    s.exposed_s += rec.exposed_s;
  }
  for (const auto& [comm, rec] : r.p2p) {
    const std::string group = graph.communicators()[comm].name;
    auto& s = by_key[{group, "send_recv", "p2p", ""}];
    s.group = group;
    s.collective = "send_recv";
    s.algorithm = "p2p";
    s.bytes += rec.bytes;
    s.count += static_cast<std::int64_t>(rec.count);
    s.time_s += rec.time_s;
  }
  std::vector<CommunicationStats> out;
  for (auto& [key, s] : by_key)
    out.push_back(std::move(s));
  return out;
}

// The busiest links by utilization (bytes over what the link could carry in the step), then bytes.
std::vector<LinkStats> link_stats(const Cluster& cluster, const ExecutionGraph& graph, const ReplayResult& r) {
  const auto links = cluster.links();
  const auto devices = cluster.devices();
  auto busy = [&](std::size_t i) { return r.link_bytes[i] / links[i].bandwidth_Bps; };
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < r.link_bytes.size(); ++i)
    if (r.link_bytes[i] > 0.0) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (busy(a) != busy(b)) return busy(a) > busy(b);
    return r.link_bytes[a] != r.link_bytes[b] ? r.link_bytes[a] > r.link_bytes[b] : a < b;
  });
  if (order.size() > kLinksReported) order.resize(kLinksReported);
  std::vector<LinkStats> out;
  for (std::size_t i : order) {
    const Link& l = links[i];
    LinkStats s;
    s.id = devices[static_cast<std::size_t>(l.src)].name + "->" + devices[static_cast<std::size_t>(l.dst)].name;
    s.kind = to_string(l.technology);
    s.bytes = r.link_bytes[i];
    s.bandwidth_Bps = l.bandwidth_Bps;
    s.utilization = r.step_time_s > 0 ? busy(i) / r.step_time_s : 0.0;
    s.busy_s = i < r.link_busy_s.size() ? r.link_busy_s[i] : 0.0;
    for (std::size_t c = 0; c < r.link_bytes_by_communicator.size(); ++c) {
      const std::vector<double>& by_link = r.link_bytes_by_communicator[c];
      if (i < by_link.size() && by_link[i] > 0.0) s.users.push_back({graph.communicators()[c].name, by_link[i]});
    }
    std::sort(s.users.begin(), s.users.end(), [](const LinkUser& a, const LinkUser& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.group < b.group;
    });
    out.push_back(std::move(s));
  }
  return out;
}

// Flops of every compute op of every rank.
// The report's memory lines. A trace has no model description: its footprint is unknown (0, fits).
MemoryStats memory_stats(const MemoryFootprint& f, bool trace) {
  MemoryStats m;
  static_cast<MemoryLines&>(m) = f;  // the lines, as the memory model names them
  m.peak_phase = trace ? "" : to_string(f.phase);
  m.allocated_peak_bytes = f.allocated_bytes;
  m.reserved_peak_bytes = f.reserved_bytes;
  m.peak_bytes_per_gpu = f.peak_bytes;
  return m;
}

double executed_flops(const ExecutionGraph& graph) {
  double flops = 0.0;
  for (const RankClass& c : graph.classes()) {
    double per_rank = 0.0;
    for (OpId i = 0; i < c.ops.size(); ++i)
      if (c.ops.kind(i) == OpKind::compute) per_rank += c.ops.flops(i);
    flops += per_rank * static_cast<double>(c.ranks.size());
  }
  return flops;
}

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// training.optimizer_offload cpu: the optimizer state every stage keeps in host memory must fit the
// host tier's capacity per GPU where the GPU gives it (GB200 / GB300); a SpecError at the key
// otherwise, with the stage's memory lines (sim/hardware/host_memory_tier.hpp); a GPU without a host
// link has no tier to offload to.
void check_host_memory(const WorkloadSpec& workload, const GpuSpec& gpu) {
  if (!(host_memory_tier(gpu).bandwidth_Bps > 0.0))
    throw SpecError(workload.source_file, "/training/optimizer_offload",
                    "GPU '" + gpu.id + "' has no host link (pcie_bandwidth_GBps 0): no host memory to offload to");
  for (const MemoryFootprint& f : estimate_memory_per_stage(workload, memory_device(gpu))) {
    if (f.host_fits) continue;
    const auto gb = [](double bytes) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3f GB", bytes / 1e9);
      return std::string(text);
    };
    throw SpecError(workload.source_file, "/training/optimizer_offload",
                    "the optimizer state offloaded to host memory, " + gb(f.host_optimizer_bytes) +
                        " per GPU on stage " + std::to_string(f.stage) + ", exceeds the host memory tier of GPU '" +
                        gpu.id + "', " + gb(f.host_capacity_bytes) +
                        " per GPU (host_memory_GB); the stage's GPU lines: weights " + gb(f.weights_bytes) +
                        ", gradients " + gb(f.gradients_bytes) + ", optimizer " + gb(f.optimizer_bytes) +
                        ", activations " + gb(f.activations_bytes) + ", peak " + gb(f.peak_bytes) +
                        "; use more ZeRO sharding (parallelism.zero_stage) or optimizer_offload none");
  }
}

// A replayed trace knows only what it recorded: the figures it cannot support become unknown (NaN,
// null in JSON) with the reason, never 0.
void mark_what_the_trace_lacks(const ExecutionGraph& graph, double flops, Report& report) {
  if (!graph.tokens_per_step()) {
    report.tokens_per_s = kUnknown;
    report.mark_unknown("tokens_per_s", "the trace has no batch or sequence size");
  }
  if (flops <= 0.0) {
    const std::string why = "the trace has no op flops (no GEMM shapes: record with record_shapes=True)";
    report.tflops_per_gpu = kUnknown;
    report.mfu = kUnknown;
    report.run.model_flops_per_step = kUnknown;
    report.mark_unknown("tflops_per_gpu", why);
    report.mark_unknown("mfu", why);
    report.mark_unknown("run.model_flops_per_step", why);
  }
  MemoryStats& m = report.memory;
  const std::string split = graph.peak_memory_bytes_per_gpu()
                                ? "the trace records only the allocator's total per GPU"
                                : "the trace has no memory events (record with profile_memory=True)";
  for (const MemoryFigure& f : memory_split_figures()) {
    m.*f.member = kUnknown;
    report.mark_unknown(f.key, split);
  }
  if (const auto peak = graph.peak_memory_bytes_per_gpu()) {
    m.peak_bytes_per_gpu = *peak;
    m.fits = *peak <= m.capacity_bytes;
  } else {
    m.peak_bytes_per_gpu = kUnknown;
    report.mark_unknown("memory.peak_bytes_per_gpu", split);
  }
}

}  // namespace

GpuSpec simulated_gpu(const ClusterSpec& cluster) {
  GpuSpec gpu = resolve_gpu(cluster);
  apply_calibration_profile(gpu);
  return gpu;
}

// The MoE layers' routing must fit the expert-parallel groups' nodes: node-limited routing's nodes
// hold at least top_k experts.
void check_expert_routing(const ExecutionGraph& graph, const Cluster& cluster, const ReplayOptions& options,
                          const std::string& file) {
  for (const auto& comm : graph.communicators()) {
    if (comm.name != options.expert_communicator || comm.groups.empty()) continue;
    std::set<int> nodes;
    for (const int rank : comm.groups.front())
      nodes.insert(cluster.node_of_gpu(rank));
    const std::string why = expert_routing_infeasible(options.expert_routing, static_cast<int>(nodes.size()));
    if (!why.empty())
      throw SpecError(
          file, "/model/moe/max_nodes_per_token",
          "node-limited routing over an expert-parallel group of " + std::to_string(nodes.size()) + " node(s): " + why);
  }
}

Report simulate_in_this_process(const ClusterSpec& cluster_spec, const WorkloadSpec& workload_spec,
                                const SimulationOptions& options) {
  const NetworkBackendEntry& backend_entry = resolve_backend(options.fidelity);
  check_algorithm(options.collective_algorithm, "--algorithm");
  for (const auto& [comm, name] : options.algorithm_by_communicator)
    check_algorithm(name, "--algorithm " + comm);
  GpuSpec gpu = resolve_gpu(cluster_spec);
  const CalibrationInfo calibration = apply_calibration_profile(gpu);
  const NetworkProfile profile = load_network_profile(
      options.network_profile == kAutoNetworkProfile ? network_profile_for_gpu(gpu.id) : options.network_profile);
  WorkloadSpec workload = workload_spec;
  const bool trace = workload.is_trace();
  if (!trace) resolve_parallelism(workload, cluster_spec.gpu_count());
  check_precision_support(workload, gpu);
  // A trace has no model description: its memory footprint is what the trace records, if anything.
  MemoryFootprint memory;
  memory.capacity_bytes = gpu.hbm_capacity_bytes;
  if (!trace) memory = estimate_memory(workload, memory_device(gpu));
  if (!trace && optimizer_offload(workload.training.optimizer_offload).host_states) check_host_memory(workload, gpu);
  const Cluster cluster = Cluster::build(cluster_spec);
  const std::optional<StackProfile> stack =
      trace ? std::nullopt
            : std::optional<StackProfile>(options.stack ? *options.stack
                                                        : find_software_stack(workload.training.effective_stack(),
                                                                              workload.source_file, "/training/stack"));
  if (options.measured_host && (!trace || workload.trace.format != "pytorch"))
    throw SpecError("--trace-host", "",
                    "\"measured\" replays the launch times of a PyTorch profiler trace; the workload " +
                        (trace ? "is a " + workload.trace.format + " trace" : std::string("is not a trace")) +
                        ": remove --trace-host");
  // A PyTorch trace replayed with its host: the graph and each op's measured issue time.
  std::optional<MeasuredHostTrace> host_trace;
  if (options.measured_host) host_trace = read_pytorch_trace_with_host(workload.trace.path, workload.trace.step);
  const ExecutionGraph graph = host_trace ? std::move(host_trace->graph)
                               : trace    ? read_trace(workload.trace)
                                          : generate_transformer_training(workload, cluster.gpu_count(), *stack);
  if (graph.world_size() != cluster.gpu_count())
    throw SpecError(workload.source_file, "/trace/path",
                    "the trace has " + std::to_string(graph.world_size()) + " ranks but the cluster has " +
                        std::to_string(cluster.gpu_count()) + " GPUs");

  ReplayOptions replay_options;
  // The clock solver's replays and the flow replay share their traffic classes and the graph's structure.
  replay_options.memo = make_replay_memo(&graph);
  replay_options.collective_algorithm = options.collective_algorithm;
  replay_options.traffic_classes = options.traffic_classes;
  replay_options.algorithm_by_communicator = options.algorithm_by_communicator;
  if (!trace && workload.model.moe.experts > 0) {
    const MoeSpec& moe = workload.model.moe;
    replay_options.expert_routing = {moe.experts, moe.top_k, moe.max_nodes_per_token};
    check_expert_routing(graph, cluster, replay_options, workload.source_file);
  }
  replay_options.network_profile = profile;
  replay_options.host_op_s = trace ? 0.0 : workload.training.host_op_us * 1e-6;
  if (host_trace) replay_options.issue_s = std::move(host_trace->issue_s);
  if (stack) {
    replay_options.step_fixed_s = stack->step_fixed_s;
    replay_options.pipeline_instruction_s = stack->pipeline_instruction_us * 1e-6;
    replay_options.kernel_time_scale = kernel_time_scales(*stack, workload.training.attention);
  }
  if (!options.timeline_path.empty()) replay_options.timeline_classes = options.timeline_classes;
  replay_options.adaptive_traffic_classes = options.adaptive_traffic_classes;

  const ModelSpec& model = workload.model;
  const double sequences = static_cast<double>(workload.training.global_batch);
  // A trace has no model: its flops are the compute ops' (recomputation included), its tokens what the
  // trace records (unknown when it records none).
  const double tokens = trace ? graph.tokens_per_step().value_or(0.0) : sequences * model.seq_len;
  const TopologyMetrics metrics = hardware_metrics(cluster);  // the counts power and cost read
  // The clock of the tensor kernels is solved with the step's mean power (sim/power/step_clock.hpp) by
  // replaying the step on the analytical backend, a fresh one each time (a backend keeps its clock;
  // SimGrid's engine, behind the flow backend, runs once per process). Another backend then replays
  // the step once, at that clock; for the analytical one the solver's last replay is the step.
  const NetworkBackendEntry* solver_entry = find_network_backend(kClockSolverFidelity);
  if (solver_entry == nullptr) throw SimulationError("the clock solver's network backend is not registered");
  ReplayResult result;
  const StepClock clock = solve_step_clock(gpu, [&](const GpuSpec& g) {
    const auto solver_backend = solver_entry->make(cluster, profile);
    result = replay(graph, cluster, g, *solver_backend, replay_options);
    return power_inputs(cluster, metrics, g, graph, result, tokens);
  });
  // A backend that cannot start over (flow) replays the step in child processes, each on a backend of
  // its own, where the traffic classes under adaptive routing need it (replay_engine.hpp).
  const auto backend = backend_entry.make(cluster, profile);
  if (&backend_entry != solver_entry)
    result = replay(
        graph, cluster, gpu, *backend, [&] { return backend_entry.make(cluster, profile); }, replay_options);
  if (!options.timeline_path.empty()) {
    write_output_file(options.timeline_path, timeline_to_chrome_json(graph, result) + "\n", "timeline file");
  }

  Report report;
  const double flops = trace ? executed_flops(graph) : training_flops_per_step(model, sequences);
  const double peak = gpu.peak_flops(workload.training.precision);
  const int gpus = cluster.gpu_count();
  report.step_time_s = result.step_time_s;
  report.tokens_per_s = result.step_time_s > 0 ? tokens / result.step_time_s : 0.0;
  report.tflops_per_gpu = result.step_time_s > 0 ? flops / result.step_time_s / gpus / 1e12 : 0.0;
  report.mfu = peak > 0 ? report.tflops_per_gpu * 1e12 / peak : 0.0;
  if (report.mfu > 1.0) {
    // Only a trace can get here (its ops carry measured durations and their flops): compute faster
    // than the GPU's dense peak is a trace inconsistent with itself, never a utilization to print.
    const std::string why = "warning: the " + std::string(trace ? "trace's ops" : "ops") + " do " +
                            std::to_string(static_cast<long long>(std::llround(report.mfu * 100))) +
                            " % of the GPU's dense " + to_string(workload.training.precision) +
                            " peak (their durations are shorter than their flops allow): MFU and TFLOP/s unknown";
    report.mfu = kUnknown;
    report.tflops_per_gpu = kUnknown;
    report.mark_unknown("mfu", why);
    report.mark_unknown("tflops_per_gpu", why);
  }
  const ClassTimes& critical = result.classes[result.critical_class];
  report.breakdown = {critical.compute_s, critical.exposed_communication_s, critical.idle_s, critical.host_wait_s};
  report.communication = communication_stats(graph, result);
  report.links = link_stats(cluster, graph, result);
  report.memory = memory_stats(memory, trace);
  report.provenance.fidelity = backend->fidelity();
  report.provenance.network = backend->description() + "; network profile '" + profile.name + "'";
  report.provenance.calibration = calibration.description;
  report.provenance.derived_defaults = cluster_spec.derived_defaults.items;
  if (!trace && workload.training.precision == Precision::fp8) {
    const Fp8RecipeInfo& recipe = fp8_recipe_info(workload.training.fp8_recipe);
    report.provenance.calibration +=
        "; fp8 recipe " + std::string(recipe.name) +
        (recipe.datasheet_only ? " (GEMM rate from the datasheet peak, not measured)" : "");
  }
  if (calibration.applied) report.provenance.extrapolated = kernels_outside_fitted_domain(*calibration.applied, graph);
  report.run.cluster = cluster_spec.name;
  report.run.workload = workload.name;
  report.run.gpu = gpu.id;
  report.run.gpus = gpus;
  report.run.nodes = cluster_spec.nodes;
  report.run.tp = workload.parallelism.tp;
  report.run.pp = workload.parallelism.pp;
  report.run.dp = workload.parallelism.dp;
  report.run.cp = workload.parallelism.cp;
  report.run.ep = workload.parallelism.ep;
  report.run.global_batch = workload.training.global_batch;
  report.run.micro_batches = workload.micro_batches();
  report.run.seq_len = model.seq_len;
  report.run.parameters = trace ? 0.0 : total_parameters(model);
  report.run.model_flops_per_step = flops;
  report.run.peak_flops_per_gpu = peak;
  report.run.precision = to_string(workload.training.precision);
  if (stack) {
    const std::string given = options.stack                     ? "given to the simulation"
                              : workload.training.stack.empty() ? "the default: the workload names no training.stack"
                                                                : "training.stack";
    const std::string file = options.stack                            ? "in memory"
                             : is_stack_file(workload.training.stack) ? workload.training.stack
                                                                      : "workloads/stacks/" + stack->id + ".json";
    report.run.stack = stack->id;
    report.provenance.stack =
        stack->id + " (" + stack->name + "; " + given + "); profile " + file + ", every value with its source";
  }
  report.run.ops_simulated = static_cast<std::int64_t>(graph.op_count());
  report.run.transfers_simulated = static_cast<std::int64_t>(result.transfers);
  if (trace) report.run.trace = workload.trace.format + " " + workload.trace.path;
  if (trace) mark_what_the_trace_lacks(graph, flops, report);

  // Power and cost (sim/power, sim/cost): device counts from the built topology, GPU activity from the replay.
  report.power = compute_power(power_inputs(cluster, metrics, gpu, graph, result, tokens));
  report.power->tensor_power_budget_w = clock.tensor_power_budget_w;
  report.power->gemm_clock_MHz = clock.gemm_clock_MHz;
  report.power->tensor_duty_cycle = clock.tensor_duty_cycle;
  report.power->clock_basis = clock.basis;
  report.power->clock_cap_modelled = clock.cap_modelled;
  report.power->clock_cap_prior = clock.cap_prior;
  report.cost =
      compute_cost(cost_inputs(cluster, metrics, gpu, result.step_time_s, tokens, report.power->cluster_avg_kw));
  if (!report.unknown_reason("tokens_per_s").empty()) {
    report.power->energy_per_token_j = kUnknown;
    report.cost->usd_per_million_tokens = kUnknown;
    report.mark_unknown("power.energy_per_token_j", report.unknown_reason("tokens_per_s"));
    report.mark_unknown("cost.usd_per_million_tokens", report.unknown_reason("tokens_per_s"));
  }
  // Error bars (sim/validation/error_bars.hpp): from the shipped residuals of the nearest validation runs.
  report.step_time_interval =
      step_time_interval(prediction_features(gpu.id, workload, gpus), report.step_time_s, shipped_residuals());
  return report;
}

namespace {

// What the parent adds to the child's report: the training run around the step (sim/training_run),
// a Monte Carlo over the step's figures.
Report finish_report(const std::string& json, const ClusterSpec& cluster, const WorkloadSpec& workload,
                     const SimulationOptions& options) {
  Report report = Report::from_json(json);
  if (options.train_tokens)
    report.time_to_train = time_to_train(
        report, cluster, workload,
        {*options.train_tokens, options.checkpoint_interval_s, options.time_to_train_runs, options.time_to_train_seed});
  return report;
}

}  // namespace

Report simulate(const ClusterSpec& cluster, const WorkloadSpec& workload, const SimulationOptions& options) {
  std::vector<SimulationOutcome> outcome = simulate_all({{&cluster, &workload}}, options, 1);
  if (outcome.front().error) std::rethrow_exception(outcome.front().error);
  return std::move(*outcome.front().report);
}

std::vector<SimulationOutcome> simulate_all(const std::vector<SimulationCase>& cases, const SimulationOptions& options,
                                            std::size_t jobs) {
  const std::vector<ChildOutcome> children = run_in_child_processes(cases.size(), jobs, [&](std::size_t i) {
    return simulate_in_this_process(*cases[i].cluster, *cases[i].workload, options).to_json(-1);
  });
  std::vector<SimulationOutcome> outcomes(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    try {
      outcomes[i].report = finish_report(children[i].get(), *cases[i].cluster, *cases[i].workload, options);
    } catch (...) {
      outcomes[i].error = std::current_exception();
    }
  }
  return outcomes;
}

}  // namespace clustersim
