// Fitting a software-stack profile to PyTorch profiler traces (clustersim calibrate --from-trace).
//
// For each traced configuration (a trace of one step of rank 0 and the workload spec it ran):
//  1. The step is generated for the workload (its own training.stack) and rank 0's class of ops is
//     timed by the kernel model of the cluster's GPU (the one simulate() uses, calibration applied), at
//     the GEMM clock the step itself runs at: the clock follows the step's mean power under the cap
//     (sim/power/step_clock.hpp), so steps 2 and 5 are repeated, each run re-timed at the tensor power
//     budget its simulation with the profile so far found, until the budgets stop moving.
//  2. Kernel classes: the trace's compute kernels are classed by name (kernel_names.hpp; NCCL/RCCL
//     kernels and memcpy/memset activities left out) and their GPU time summed per class. Over all
//     runs, scale[class] = sum of measured time / sum of modelled time (one ratio per class: a class
//     total is matched exactly; the residual is the largest deviation of a run's own ratio from the
//     pooled one). A class with no time on either side is not fitted (1).
//  3. Host cost per op: the median CPU time between one kernel launch and the next, over every launch
//     of the step, is the host's time per launched kernel (the median: a long pause (data loading, a
//     synchronization, the optimizer's host work) is not a cost of every op; it goes to the fixed cost
//     of step 5). Scaled by launches / generated ops (the host time of a step conserved), it is
//     training.host_op_us: the replay issues op k of a rank at (k + 1) x host_op
//     (ReplayOptions::host_op_s) and decides itself whether the GPU waits. Measured on every launch,
//     not only on the kernels that starved the GPU (the previous kernel of their stream had ended when
//     the launch returned, and they started within kStarvedUs after; counted and reported): in a
//     GPU-bound step the few starved kernels are the ones after such pauses, and their gaps are not
//     the host's pace (one H100's real traces, 2026-11-28: 9 starved of 1,510 launches, a median gap of
//     157 us where every launch's median is 72 us).
//  4. Overlap: the part of the NCCL kernels' time during which a compute kernel ran on another stream,
//     recorded in the profile's description and next to its overlap_grad_reduce source, not turned into
//     a setting (a step with one gradient bucket, or a host-bound one, overlaps nothing either way).
//  5. Fixed per-step cost: each run is simulated with the profile so far; the mean of measured step -
//     simulated step is step.fixed_s (a host delay before the first op; 0 when negative).
// The workload's own stack (its built-in profile) gives everything the traces do not measure.
#include "sim/stack_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/core/error.hpp"
#include "sim/core/intervals.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/simulate.hpp"
#include "workloads/execution_graph.hpp"
#include "workloads/transformer_generator.hpp"

namespace clustersim {
namespace {

constexpr double kStarvedUs = 20.0;         // a starved kernel starts within this long after its launch returns
constexpr double kKernelCountRatio = 10.0;  // trace compute kernels vs generated compute ops, at most
constexpr int kClockPasses = 8;             // fit passes at most while the GEMM clock settles

std::string fmt(double v, int digits = 4) {
  std::ostringstream o;
  o << std::setprecision(digits) << v;
  return o.str();
}

std::string percent(double v) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(2) << 100.0 * v << " %";
  return o.str();
}

const RankClass& rank0_class(const ExecutionGraph& graph) {
  for (const auto& c : graph.classes())
    if (std::find(c.ranks.begin(), c.ranks.end(), 0) != c.ranks.end()) return c;
  return graph.classes().front();  // unreachable: validate() puts every rank in a class
}

struct RunMeasure {
  RunFit fit;
  std::array<double, kKernelClassCount> measured_s{}, modelled_s{};
  std::array<std::size_t, kKernelClassCount> trace_kernels{}, model_ops{};
  WorkloadSpec workload;  // parallelism resolved
  StackProfile stack;     // the workload's own
  // The generated step, kept alive: its ops' names are views into it. `ops` are rank 0's compute ops,
  // re-timed at the clock each pass's step runs at.
  std::shared_ptr<const ExecutionGraph> graph;
  std::vector<ComputeOp> ops;
};

// Times the run's compute ops per class on `gpu` (its tensor-power budget sets the GEMM clock).
// Each class is timed as simulate() replays it before any measured factor: the kernel model times the
// workload's implementation factors (kernel_time_scales of a stack with none; e.g. the Triton attention
// kernel), so a fitted factor is relative to what the simulation would do.
void model(RunMeasure& m, const GpuSpec& gpu) {
  m.modelled_s.fill(0.0);
  for (const auto& op : m.ops)
    m.modelled_s[static_cast<std::size_t>(op.kernel)] += kernel_time(gpu, op).time_s;
  StackProfile unmeasured = m.stack;
  unmeasured.kernel_time_scale.fill(1.0);
  const auto scales = kernel_time_scales(unmeasured, m.workload.training.attention);
  for (std::size_t c = 0; c < kKernelClassCount; ++c)
    m.modelled_s[c] *= scales[c];
}

RunMeasure measure(const ClusterSpec& cluster, const TracedRun& run) {
  RunMeasure m;
  m.workload = run.workload;
  if (m.workload.is_trace())
    throw SpecError(run.workload.source_file, "/trace",
                    "calibrate --from-trace needs the model description the trace ran (model, training, "
                    "parallelism), not a trace workload");
  resolve_parallelism(m.workload, cluster.gpu_count());
  m.stack = find_software_stack(m.workload.training.effective_stack(), m.workload.source_file, "/training/stack");
  m.graph =
      std::make_shared<const ExecutionGraph>(generate_transformer_training(m.workload, cluster.gpu_count(), m.stack));
  const OpTable& ops = rank0_class(*m.graph).ops;
  RunFit& f = m.fit;
  f.trace = run.trace.file;
  f.step = run.trace.step;
  f.model_ops = ops.size();
  for (OpId i = 0; i < ops.size(); ++i) {
    if (ops.kind(i) != OpKind::compute) continue;
    const auto k = static_cast<std::size_t>(ops.kernel(i));
    m.ops.push_back(ops.compute_op(i));
    ++m.model_ops[k];
    ++f.model_compute_ops;
  }

  const std::vector<TimelineKernel>& kernels = run.trace.kernels;
  for (const auto& k : kernels) {
    if (k.memcpy) {
      ++f.memcpy_events;
    } else if (k.communication) {
      ++f.communication_kernels;
      f.communication_s += k.duration_us * 1e-6;
    } else {
      ++f.compute_kernels;
      const auto c = static_cast<std::size_t>(k.kernel);
      m.measured_s[c] += k.duration_us * 1e-6;
      ++m.trace_kernels[c];
    }
  }
  const std::string where = run.trace.step.empty() ? "the trace" : run.trace.step;
  if (f.compute_kernels == 0)
    throw SpecError(run.trace.file, "/traceEvents",
                    where +
                        " has no compute kernel (only NCCL kernels or memory copies): nothing to compare "
                        "with the model");
  const double ratio = static_cast<double>(f.compute_kernels) / static_cast<double>(f.model_compute_ops);
  if (ratio > kKernelCountRatio || ratio < 1.0 / kKernelCountRatio)
    throw SpecError(run.trace.file, "/traceEvents",
                    where + " has " + std::to_string(f.compute_kernels) + " compute kernels but the step of " +
                        run.workload.source_file + " generates " + std::to_string(f.model_compute_ops) +
                        " compute ops for rank 0 (more than " + fmt(kKernelCountRatio) +
                        " times apart): the trace is not of this workload (model shape, micro-batch, "
                        "micro-batches, parallelism)");

  // Host: launches in CPU order; a starved kernel's gap to the launch before it.
  std::vector<std::size_t> launched;
  for (std::size_t i = 0; i < kernels.size(); ++i)
    if (kernels[i].launch_start_us && !kernels[i].memcpy) launched.push_back(i);
  std::stable_sort(launched.begin(), launched.end(), [&](std::size_t a, std::size_t b) {
    return *kernels[a].launch_start_us < *kernels[b].launch_start_us;
  });
  f.launches = launched.size();
  std::map<std::int64_t, double> stream_end;  // the end of the previous kernel of each stream (GPU order)
  std::vector<double> previous_end(kernels.size(), -std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    auto it = stream_end.find(kernels[i].stream);
    if (it != stream_end.end()) previous_end[i] = it->second;
    stream_end[kernels[i].stream] = kernels[i].start_us + kernels[i].duration_us;
  }
  std::vector<double> gaps_us;
  for (std::size_t j = 1; j < launched.size(); ++j) {
    const TimelineKernel& k = kernels[launched[j]];
    const double returned = *k.launch_start_us + *k.launch_duration_us;
    if (previous_end[launched[j]] <= returned && k.start_us - returned <= kStarvedUs) ++f.starved;
    gaps_us.push_back(*k.launch_start_us - *kernels[launched[j - 1]].launch_start_us);
  }
  if (!gaps_us.empty()) {
    std::sort(gaps_us.begin(), gaps_us.end());
    const std::size_t n = gaps_us.size();
    f.launch_gap_s = (n % 2 == 1 ? gaps_us[n / 2] : 0.5 * (gaps_us[n / 2 - 1] + gaps_us[n / 2])) * 1e-6;
  }

  // Overlap: NCCL kernel time during which some compute kernel of another stream ran.
  std::map<std::int64_t, std::vector<std::pair<double, double>>> compute;  // per stream
  for (const auto& k : kernels)
    if (!k.memcpy && !k.communication) compute[k.stream].emplace_back(k.start_us, k.start_us + k.duration_us);
  for (const auto& k : kernels) {
    if (!k.communication) continue;
    std::vector<std::pair<double, double>> others;
    for (const auto& [stream, v] : compute)
      if (stream != k.stream) others.insert(others.end(), v.begin(), v.end());
    f.communication_overlapped_s +=
        overlap_with(k.start_us, k.start_us + k.duration_us, merge_intervals(std::move(others))) * 1e-6;
  }
  f.measured_step_s = run.trace.step_s();
  return m;
}

std::string file_list(const std::vector<RunMeasure>& runs) {
  std::string s;
  for (const auto& r : runs)
    s += (s.empty() ? "" : ", ") + r.fit.trace + (r.fit.step.empty() ? "" : " " + r.fit.step);
  return s;
}

void set_default(StackProfile& p, const std::string& key, const std::string& json_value) {
  for (auto& [k, v] : p.defaults) {
    if (k == key) {
      v = json_value;
      return;
    }
  }
  p.defaults.emplace_back(key, json_value);
}

std::string json_number(double v) {
  std::ostringstream o;
  o << std::setprecision(17) << v;
  return o.str();
}

}  // namespace

StackFit fit_stack_from_traces(const ClusterSpec& cluster, std::span<const TracedRun> runs,
                               const StackFitOptions& options) {
  if (runs.empty()) throw SpecError("--from-trace", "", "no trace to fit");
  const GpuSpec gpu = simulated_gpu(cluster);
  std::vector<RunMeasure> measured;
  for (const auto& run : runs)
    measured.push_back(measure(cluster, run));
  const std::string traces = file_list(measured);

  StackFit fit;
  StackProfile& p = fit.profile;
  p = measured.front().stack;
  p.id = options.id;
  p.name = options.name.empty() ? options.id : options.name;
  p.description = "measured from " + traces + " by clustersim calibrate --from-trace on " + cluster.name + " (" +
                  gpu.id + "); the rest as in " + measured.front().stack.id;

  // Host: each trace's median launch gap, per generated op, weighted by its launches.
  double host_sum = 0.0;
  std::size_t starved = 0, launches = 0, gapped = 0;
  std::string gaps;
  for (const auto& r : measured) {
    starved += r.fit.starved;
    launches += r.fit.launches;
    if (r.fit.launches < 2) continue;
    gaps += (gaps.empty() ? "" : ", ") + fmt(r.fit.launch_gap_s * 1e6) + " us";
    const double per_op =
        r.fit.launch_gap_s * static_cast<double>(r.fit.launches) / static_cast<double>(r.fit.model_ops);
    host_sum += per_op * static_cast<double>(r.fit.launches);
    gapped += r.fit.launches;
  }
  fit.host_op_s = gapped > 0 ? host_sum / static_cast<double>(gapped) : 0.0;
  set_default(p, "training.host_op_us", json_number(fit.host_op_s * 1e6));
  p.sources["training.host_op_us"] =
      gapped > 0 ? "fitted from " + traces + ": the median CPU time between consecutive kernel launches (" + gaps +
                       "), times launches / generated ops, weighted by launches (" + std::to_string(launches) +
                       " launches, " + std::to_string(starved) + " of them starved the GPU)"
                 : "fitted from " + traces + ": no two kernel launches with their CPU times: 0";

  // A run simulated with the workload's own stack (nullptr) or a profile: its step and the tensor
  // power budget its GEMMs ran at (the step-averaged power cap, sim/power/step_clock.hpp).
  auto simulated = [&](const RunMeasure& r, const StackProfile* stack) {
    SimulationOptions o;
    o.fidelity = options.fidelity;
    WorkloadSpec w = r.workload;
    if (stack != nullptr) {
      o.stack = *stack;
      w.training.host_op_us = fit.host_op_s * 1e6;
    }
    const Report report = simulate(cluster, w, o);
    return std::pair{report.step_time_s, report.power ? report.power->tensor_power_budget_w : 0.0};
  };
  for (auto& r : measured)
    model(r, gpu);
  // The GEMM clock depends on the step's mean power (sim/power/step_clock.hpp), so the kernels are timed
  // at the clock the step simulated with the fitted profile runs at: start at the sustained clock, fit,
  // simulate each run, re-time its ops at the budget its step found, and fit again until the budgets
  // stop moving (a few passes; the budget only rises with idle time, so this settles).
  std::size_t kernels_total = 0;
  std::vector<double> budgets_w(measured.size(), -1.0);
  for (int pass = 0; pass < kClockPasses; ++pass) {
    // Kernel classes: pooled ratio per class, residual = the runs' spread around it.
    kernels_total = 0;
    fit.classes.clear();
    for (KernelClass k : kKernelClasses) {
      const auto c = static_cast<std::size_t>(k);
      KernelClassFit cf;
      cf.kernel = k;
      for (const auto& r : measured) {
        cf.trace_kernels += r.trace_kernels[c];
        cf.model_ops += r.model_ops[c];
        cf.measured_s += r.measured_s[c];
        cf.modelled_s += r.modelled_s[c];
      }
      kernels_total += cf.trace_kernels;
      cf.fitted = cf.measured_s > 0.0 && cf.modelled_s > 0.0;
      if (cf.fitted) {
        cf.scale = cf.measured_s / cf.modelled_s;
        for (const auto& r : measured)
          if (r.measured_s[c] > 0.0 && r.modelled_s[c] > 0.0)
            cf.residual = std::max(cf.residual, std::abs(r.measured_s[c] / r.modelled_s[c] / cf.scale - 1.0));
        p.kernel_time_scale[c] = cf.scale;
        p.sources[std::string("kernel_time_scale.") + to_string(k)] =
            "fitted from " + traces + ": " + std::to_string(cf.trace_kernels) + " " + to_string(k) + " kernels, " +
            fmt(cf.measured_s * 1e3) + " ms measured / " + fmt(cf.modelled_s * 1e3) + " ms modelled (" +
            std::to_string(cf.model_ops) + " generated ops); residual " + percent(cf.residual) +
            " (largest deviation of one trace's ratio from the pooled one)";
      }
      fit.classes.push_back(cf);
    }

    p.step_fixed_s = 0.0;  // the workload's stack may itself be a measured profile with a fixed cost
    double fixed_sum = 0.0;
    std::vector<double> unfixed;
    for (auto& r : measured) {
      r.fit.builtin_step_s = simulated(r, nullptr).first;
      unfixed.push_back(simulated(r, &p).first);
      fixed_sum += r.fit.measured_step_s - unfixed.back();
    }
    fit.step_fixed_s = std::max(0.0, fixed_sum / static_cast<double>(measured.size()));
    p.step_fixed_s = fit.step_fixed_s;
    double worst = 0.0;
    for (std::size_t i = 0; i < measured.size(); ++i) {
      measured[i].fit.fitted_step_s = unfixed[i] + fit.step_fixed_s;  // the fixed cost delays every op alike
      worst = std::max(worst, std::abs(measured[i].fit.fitted_step_s / measured[i].fit.measured_step_s - 1.0));
    }
    p.sources["step.fixed_s"] = "fitted from " + traces + " (" + std::to_string(kernels_total) +
                                " compute kernels): mean of measured step - step simulated with the fitted values (" +
                                options.fidelity + " fidelity), 0 when negative; residual " + percent(worst) +
                                " (largest step-time error after the fit)";

    bool moved = false;
    for (std::size_t i = 0; i < measured.size(); ++i) {
      p.step_fixed_s = fit.step_fixed_s;
      const double budget_w = simulated(measured[i], &p).second;
      moved = moved || std::abs(budget_w - budgets_w[i]) > 1e-9 * std::max(1.0, budget_w);
      budgets_w[i] = budget_w;
      GpuSpec at_clock = gpu;
      at_clock.tensor_power_budget_w = budget_w;
      model(measured[i], at_clock);
    }
    if (!moved) break;
  }
  // Overlap seen: recorded, not inferred (a step with one gradient bucket, or a host-bound one, shows
  // none even where the stack overlaps), next to the stack's own overlap setting.
  double comm = 0.0, overlapped = 0.0;
  for (const auto& r : measured) {
    comm += r.fit.communication_s;
    overlapped += r.fit.communication_overlapped_s;
  }
  fit.communication_seen = comm > 0.0;
  fit.overlapped_fraction = comm > 0.0 ? overlapped / comm : 0.0;
  if (fit.communication_seen) {
    const std::string seen = "seen in " + traces + ": " + fmt(overlapped * 1e3) + " of " + fmt(comm * 1e3) +
                             " ms of NCCL kernel time (" + percent(fit.overlapped_fraction) +
                             ") ran concurrently with compute kernels on other streams";
    p.description += "; " + seen;
    if (p.sources.count("parallelism.overlap_grad_reduce") != 0)
      p.sources["parallelism.overlap_grad_reduce"] += " [" + seen + "]";
  }

  for (auto& r : measured)
    fit.runs.push_back(r.fit);
  return fit;
}

std::string stack_fit_to_json(const StackFit& fit) {
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  for (const auto& c : fit.classes) {
    classes.push_back({{"kernel_class", to_string(c.kernel)},
                       {"trace_kernels", c.trace_kernels},
                       {"model_ops", c.model_ops},
                       {"measured_s", c.measured_s},
                       {"modelled_s", c.modelled_s},
                       {"fitted", c.fitted},
                       {"scale", c.scale},
                       {"residual", c.residual}});
  }
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const auto& r : fit.runs) {
    runs.push_back({{"trace", r.trace},
                    {"step", r.step},
                    {"compute_kernels", r.compute_kernels},
                    {"communication_kernels", r.communication_kernels},
                    {"memcpy_events", r.memcpy_events},
                    {"model_compute_ops", r.model_compute_ops},
                    {"model_ops", r.model_ops},
                    {"launches", r.launches},
                    {"starved_launches", r.starved},
                    {"launch_gap_s", r.launch_gap_s},
                    {"communication_s", r.communication_s},
                    {"communication_overlapped_s", r.communication_overlapped_s},
                    {"measured_step_s", r.measured_step_s},
                    {"builtin_step_s", r.builtin_step_s},
                    {"fitted_step_s", r.fitted_step_s}});
  }
  const nlohmann::ordered_json j{{"profile", fit.profile.id},
                                 {"host_op_s", fit.host_op_s},
                                 {"step_fixed_s", fit.step_fixed_s},
                                 {"communication_seen", fit.communication_seen},
                                 {"communication_overlapped_fraction", fit.overlapped_fraction},
                                 {"classes", classes},
                                 {"runs", runs}};
  return j.dump(2) + "\n";
}

}  // namespace clustersim
