// clustersim._core: the thin C++ layer under the Python package `clustersim`.
//
// Specs cross the boundary as JSON text plus the name of the file they came from (for error
// messages); reports and topology metrics come back as JSON text. Everything else (objects,
// DataFrames, sweeps, plots) is Python, in bindings/python/clustersim. C++ errors become the
// package's own exceptions:
//   clustersim::SpecError       -> clustersim.errors.SpecError(file, json_path, message)  (a ValueError)
//   clustersim::SimulationError -> clustersim.errors.SimulationError(message)             (a RuntimeError)
// with the same text the CLI prints.
#include <algorithm>
#include <csignal>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sim/api/design_sizing.hpp"
#include "sim/api/kernel_fit_request.hpp"
#include "sim/api/measurement_files.hpp"
#include "sim/api/serving_comparison.hpp"
#include "sim/api/serving_layout_search.hpp"
#include "sim/api/serving_request.hpp"
#include "sim/api/serving_validation.hpp"
#include "sim/api/simulation_request.hpp"
#include "sim/api/spec_overrides.hpp"
#include "sim/api/stack_fit_request.hpp"
#include "sim/api/validation_request.hpp"
#include "sim/collective_sweep.hpp"
#include "sim/collectives/collective_algorithm.hpp"
#include "sim/core/child_process.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "sim/core/spec_document.hpp"
#include "sim/core/spec_field.hpp"
#include "sim/cost/comparison_html.hpp"
#include "sim/cost/design_comparison.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_accuracy.hpp"
#include "sim/hardware/kernel_fit.hpp"
#include "sim/hardware/kernel_measurement.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/report/report.hpp"
#include "sim/report/report_schema.hpp"
#include "sim/serving/serving_scheduler.hpp"
#include "sim/serving/serving_spec.hpp"
#include "sim/simulate.hpp"
#include "sim/stack_fit.hpp"
#include "sim/validation/validation_report.hpp"
#include "topologies/cluster.hpp"
#include "topologies/cluster_schema.hpp"
#include "topologies/cluster_spec.hpp"
#include "topologies/topology_export.hpp"
#include "topologies/topology_metrics.hpp"
#include "workloads/kernel_timeline.hpp"
#include "workloads/workload_schema.hpp"
#include "workloads/workload_spec.hpp"

namespace py = pybind11;

namespace clustersim {
namespace {

// A spec in its normalized JSON form (every key, defaults filled in) and the file it names in errors.
using SpecText = std::pair<std::string, std::string>;

// JSON text plus "key.path=value" overrides, applied exactly as the CLI's --set applies them.
std::string with_overrides(const std::string& text, const std::string& file, const Overrides& overrides) {
  if (overrides.empty()) return text;
  SpecDocument doc = parse_spec_text(text, file);
  for (const auto& [path, value] : overrides)
    apply_override(doc, path, value);
  return doc.json.dump();
}

SpecText load_cluster(const std::string& source, const Overrides& overrides) {
  const ClusterSpec spec = load_cluster_spec(source, overrides);
  return {cluster_spec_to_json(spec), spec.source_file};
}

SpecText parse_cluster(const std::string& text, const std::string& file, const Overrides& overrides) {
  const ClusterSpec spec = parse_cluster_spec(with_overrides(text, file, overrides), file);
  return {cluster_spec_to_json(spec), spec.source_file};
}

// A trace's path is resolved against its workload file's directory, relative to the working directory
// of the moment: made absolute here, the normalized spec reads the same trace wherever it goes next
// (parsed again with its file name, simulated from another directory, sent to a sweep's workers).
SpecText workload_text(WorkloadSpec spec) {
  if (spec.is_trace()) spec.trace.path = std::filesystem::absolute(spec.trace.path).lexically_normal().string();
  return {workload_spec_to_json(spec), spec.source_file};
}

// compare(..., gpus=N): the cluster sized to N GPUs (its normalized JSON, file and what changed) or the
// reason it cannot be; the workload with its data-parallel size left to the cluster.
std::tuple<std::string, std::string, std::vector<std::string>, std::string> size_cluster(const std::string& text,
                                                                                         const std::string& file,
                                                                                         std::int64_t gpus) {
  const ClusterSpec spec = parse_cluster_spec(text, file);
  try {
    SizedDesign sized = size_design(spec, gpus);
    return {cluster_spec_to_json(sized.cluster), sized.cluster.source_file, sized.changes, ""};
  } catch (const SpecError& e) {
    return {"", file, {}, e.what()};
  }
}

// compare(..., budget_usd=X): the cluster at the most GPUs its capex allows for the workload (its JSON,
// file, the changes with the capex, '') or ('', file, [], why it cannot).
std::tuple<std::string, std::string, std::vector<std::string>, std::string> size_cluster_to_budget(
    const std::string& text, const std::string& file, const std::string& workload_text,
    const std::string& workload_file, double budget_usd) {
  const ClusterSpec spec = parse_cluster_spec(text, file);
  const WorkloadSpec workload = parse_workload_spec(workload_text, workload_file);
  try {
    BudgetSizedDesign sized = size_design_to_budget(spec, workload, budget_usd);
    return {cluster_spec_to_json(sized.design.cluster), sized.design.cluster.source_file, sized.design.changes, ""};
  } catch (const SpecError& e) {
    return {"", file, {}, e.what()};
  }
}

SpecText workload_at_any_size_text(const std::string& text, const std::string& file) {
  return workload_text(workload_at_any_size(parse_workload_spec(text, file)));
}

SpecText load_workload(const std::string& source, const Overrides& overrides) {
  return workload_text(load_workload_spec(source, overrides));
}

SpecText parse_workload(const std::string& text, const std::string& file, const Overrides& overrides) {
  return workload_text(parse_workload_spec(with_overrides(text, file, overrides), file));
}

// The value type a keyword is cast to: T, or the T of std::optional<T>.
template <typename T>
struct OptionalValue {
  using type = T;
};
template <typename T>
struct OptionalValue<std::optional<T>> {
  using type = T;
};

// A request's keyword options from Python: each keyword with what it sets. None or absent: the
// request's default; an unknown keyword is a SpecError naming `what` and the table's keywords.
using Keyword = std::pair<std::string, std::function<void(const py::handle&)>>;

template <typename T>
std::function<void(const py::handle&)> set(T& field) {
  return [&field](const py::handle& v) { field = v.cast<typename OptionalValue<T>::type>(); };
}

void apply_keywords(const py::dict& options, const char* what, const std::vector<Keyword>& table) {
  for (const auto& [key, value] : options) {
    if (value.is_none()) continue;
    const std::string name = py::str(key);
    const auto k = std::find_if(table.begin(), table.end(), [&](const Keyword& e) { return e.first == name; });
    if (k != table.end()) {
      k->second(value);
      continue;
    }
    std::string expected;
    for (const Keyword& e : table)
      expected += (expected.empty() ? "" : ", ") + e.first;
    throw SpecError(what, "", "unknown option '" + name + "'; expected " + expected);
  }
}

// simulate()'s keyword options from Python: {fidelity, algorithm (a name, or {group: name} with "*"
// for every other group), network_profile, timeline_path, timeline_classes, trace_host, exhaustive,
// adaptive_classes}; None or absent: the request's default. The request owns the defaults and checks
// (sim/api/simulation_request.hpp).
SimulationRequest simulation_request(const py::dict& options) {
  SimulationRequest r;
  const auto algorithm = [&r](const py::handle& value) {
    if (py::isinstance<py::str>(value)) {
      r.algorithm = value.cast<std::string>();
      return;
    }
    for (const auto& [group, name] : value.cast<std::map<std::string, std::string>>()) {
      if (group == "*")
        r.algorithm = name;
      else
        r.algorithm_by_group[group] = name;
    }
  };
  apply_keywords(options, "simulate",
                 {{"fidelity", set(r.fidelity)},
                  {"algorithm", algorithm},
                  {"network_profile", set(r.network_profile)},
                  {"timeline_path", set(r.timeline_path)},
                  {"timeline_classes", set(r.timeline_classes)},
                  {"trace_host", set(r.trace_host)},
                  {"exhaustive", set(r.exhaustive)},
                  {"adaptive_classes", set(r.adaptive_classes)},
                  {"train_tokens",
                   [&r](const py::handle& v) {
                     r.train_tokens = py::isinstance<py::str>(v) ? v.cast<std::string>() : std::string(py::repr(v));
                   }},
                  {"checkpoint_interval_s", set(r.checkpoint_interval_s)},
                  {"runs", set(r.time_to_train_runs)},
                  {"seed", set(r.time_to_train_seed)}});
  return r;
}

// One simulation in a child process (the C++ simulate() forks); the GIL is released while it runs so
// that other Python threads (a sweep's) go on.
std::string simulate_json(const std::string& cluster_text, const std::string& cluster_file,
                          const std::string& workload_text, const std::string& workload_file, const py::dict& options) {
  const ClusterSpec cluster = parse_cluster_spec(cluster_text, cluster_file);
  const WorkloadSpec workload = parse_workload_spec(workload_text, workload_file);
  const SimulationOptions o = simulation_options(simulation_request(options));
  py::gil_scoped_release release;
  return simulate(cluster, workload, o).to_json(-1);
}

// `clustersim collective --json` from Python's keywords: {op, ranks, sizes, min_bytes, max_bytes,
// step_factor, peer_offset, fidelity, algorithm, network_profile} (CollectiveSweepRequest's fields, the
// sizes as numbers, the rest as the CLI's text); None or absent: the request's default. The rows as
// one-line JSON, simulated in a child process with the GIL released.
std::string collective_json(const std::string& cluster_text, const std::string& cluster_file, const py::dict& options) {
  const ClusterSpec cluster = parse_cluster_spec(cluster_text, cluster_file);
  CollectiveSweepRequest r;
  apply_keywords(options, "collective",
                 {{"op", set(r.op)},
                  {"ranks", set(r.ranks)},
                  {"sizes", set(r.sizes)},
                  {"min_bytes", set(r.min_bytes)},
                  {"max_bytes", set(r.max_bytes)},
                  {"step_factor", set(r.step_factor)},
                  {"peer_offset", set(r.peer_offset)},
                  {"fidelity", set(r.fidelity)},
                  {"algorithm", set(r.algorithm)},
                  {"network_profile", set(r.network_profile)}});
  const CollectiveSweepOptions o = collective_sweep_options(cluster, r);
  py::gil_scoped_release release;
  return collective_rows_json(simulate_collective_sweep(cluster, o), -1);
}

// The keys of a row of `clustersim collective --json`, in order: those its writer gives one row.
std::vector<std::string> collective_columns() {
  const std::vector<CollectiveSweepRow> one_row(1);
  const nlohmann::ordered_json rows = nlohmann::ordered_json::parse(collective_rows_json(one_row, -1));
  std::vector<std::string> out;
  for (const auto& [key, value] : rows.at(0).items())
    out.push_back(key);
  return out;
}

// `clustersim topology info --json`: counts, bisection, diameter, hops, oversubscription per tier.
std::string topology_info_json(const std::string& cluster_text, const std::string& cluster_file) {
  return metrics_to_json(compute_metrics(Cluster::build(parse_cluster_spec(cluster_text, cluster_file))));
}

// `clustersim topology export --format F`; the caller checks `format` against export_format_names().
std::string topology_export(const std::string& cluster_text, const std::string& cluster_file,
                            const std::string& format) {
  const ExportFormat* f = find_export_format(format);
  if (f == nullptr) throw SpecError("--format", "", "unknown format '" + format + "'");
  return f->write(Cluster::build(parse_cluster_spec(cluster_text, cluster_file)));
}

std::vector<std::string> export_format_names() {
  std::vector<std::string> out;
  for (const auto& f : export_formats())
    out.emplace_back(f.name);
  return out;
}

// `clustersim compare`'s table from reports the caller simulated: one (design, report JSON, error)
// per design, the report empty when its simulation failed. Returns comparison_to_json's document and
// comparison_to_text's table.
using DesignInput = std::tuple<std::string, std::string, std::string>;

std::tuple<std::string, std::string, std::string> compare_json(const std::string& workload, double tokens,
                                                               const std::vector<DesignInput>& designs) {
  std::vector<DesignRow> rows;
  for (const auto& [design, report, error] : designs) {
    DesignRow row;
    row.design = design;
    if (report.empty())
      row.error = error;
    else
      row.report = Report::from_json(report);
    rows.push_back(std::move(row));
  }
  const DesignComparison comparison = compare_designs(workload, tokens, std::move(rows));
  return {comparison_to_json(comparison, -1), comparison_to_text(comparison), comparison_to_html(comparison)};
}

// `clustersim validate DATASET --json` for one dataset: (JSON document, readable table). The rows are
// simulated `jobs` at a time, each in its own child process, with the GIL released.
std::pair<std::string, std::string> validate_json(const std::string& dataset, const py::dict& keywords) {
  ValidationRequest request;
  apply_keywords(keywords, "validate",
                 {{"fidelity", set(request.fidelity)}, {"jobs", set(request.jobs)}, {"limit", set(request.limit)}});
  const ValidationOptions options = validation_options(request);
  const ValidationDataset d = load_validation_dataset(dataset, validation_row_limit(request));
  ValidationResult result;
  {
    py::gil_scoped_release release;
    result = run_validation(d, options);
  }
  return {validation_to_json(d, result, options, -1), validation_to_text(d, result, options)};
}

// clustersim validate <serving dataset> from a keyword dict {limit, scheduler} (sim/api/serving_validation:
// limit 0 or absent: every row): (JSON text, the CLI's table).
std::pair<std::string, std::string> validate_serving_json(const std::string& dataset, const py::dict& options) {
  ServingValidationOptions o;
  apply_keywords(options, "validate_serving", {{"limit", set(o.limit)}, {"scheduler", set(o.scheduler)}});
  ServingValidation v;
  {
    py::gil_scoped_release release;
    v = run_serving_validation(dataset, o);
  }
  return {serving_validation_json(v, -1), serving_validation_text(v)};
}

// clustersim serve from a keyword dict {cluster, serving, set, timeline_path, timeline_requests,
// sample_interval_s, iteration_records}: the report (JSON text and the CLI's summary) and its tables as
// columns (lists): one row per request, per iteration (when recorded). Runs in this process (no SimGrid)
// with the GIL released.
ServingRequest serving_request(const py::dict& keywords) {
  ServingRequest request;
  apply_keywords(keywords, "serve",
                 {{"cluster", set(request.cluster)},
                  {"serving", set(request.serving)},
                  {"set", set(request.settings)},
                  {"timeline_path", set(request.timeline_path)},
                  {"timeline_requests", set(request.timeline_requests)},
                  {"sample_interval_s", set(request.sample_interval_s)},
                  {"iteration_records", set(request.iteration_records)}});
  return request;
}

// clustersim serve --search-layouts --json from a keyword dict {clusters, serving, set, target_rate_rps,
// tp, pp}: the search's JSON text and the CLI's table.
std::pair<std::string, std::string> search_layouts_json(const py::dict& keywords) {
  LayoutSearchRequest request;
  apply_keywords(keywords, "search_layouts",
                 {{"clusters", set(request.clusters)},
                  {"serving", set(request.serving)},
                  {"set", set(request.settings)},
                  {"target_rate_rps", set(request.target_rate_rps)},
                  {"tp", set(request.tp)},
                  {"pp", set(request.pp)}});
  LayoutSearch search;
  {
    py::gil_scoped_release release;
    search = search_layouts(request);
  }
  return {layout_search_json(search, -1), layout_search_text(search)};
}

// clustersim compare --serving --json from a keyword dict {clusters, serving, set}: the comparison's JSON
// text and the CLI's table.
std::pair<std::string, std::string> compare_serving_json(const py::dict& keywords) {
  std::vector<std::string> clusters;
  std::string serving;
  std::vector<std::string> settings;
  apply_keywords(keywords, "compare_serving",
                 {{"clusters", set(clusters)}, {"serving", set(serving)}, {"set", set(settings)}});
  ServingComparison c;
  {
    py::gil_scoped_release release;
    c = compare_serving(clusters, serving, settings);
  }
  return {serving_comparison_json(c, -1), serving_comparison_text(c)};
}

// clustersim serve --find-max-rate --json from the same keyword dict: the search's JSON text.
std::string find_max_rate_json(const py::dict& keywords) {
  const ServingRequest request = serving_request(keywords);
  MaxRateSearch search;
  {
    py::gil_scoped_release release;
    search = find_max_rate(request);
  }
  return max_rate_search_json(search, -1);
}

py::dict serve_dict(const py::dict& keywords) {
  const ServingRequest request = serving_request(keywords);
  ServingReport report;
  {
    py::gil_scoped_release release;
    report = serve(request);
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::map<std::string, std::vector<double>> real;
  std::map<std::string, std::vector<long long>> whole;
  py::list status;
  for (std::size_t i = 0; i < report.result.requests.size(); ++i) {
    const ServedRequest& q = report.result.requests[i];
    const bool done = q.status == RequestStatus::finished;
    whole["request"].push_back(static_cast<long long>(i));
    whole["replica"].push_back(q.replica);
    whole["prompt_tokens"].push_back(q.prompt_tokens);
    whole["output_tokens"].push_back(q.output_tokens);
    whole["preemptions"].push_back(q.preemptions);
    real["arrival_s"].push_back(q.arrival_s);
    real["first_token_s"].push_back(done ? q.first_token_s : nan);
    real["finish_s"].push_back(done ? q.finish_s : nan);
    real["ttft_s"].push_back(done ? q.first_token_s - q.arrival_s : nan);
    real["e2e_s"].push_back(done ? q.finish_s - q.arrival_s : nan);
    real["tbt_mean_s"].push_back(done && q.generated > 1 ? q.tbt_sum_s / (q.generated - 1) : nan);
    real["tbt_max_s"].push_back(done && q.generated > 1 ? q.tbt_max_s : nan);
    status.append(to_string(q.status));
  }
  py::dict requests;
  for (const char* k : {"request", "replica", "prompt_tokens", "output_tokens"})
    requests[k] = py::cast(whole[k]);
  requests["status"] = status;
  for (const char* k : {"arrival_s", "first_token_s", "finish_s", "ttft_s", "e2e_s", "tbt_mean_s", "tbt_max_s"})
    requests[k] = py::cast(real[k]);
  requests["preemptions"] = py::cast(whole["preemptions"]);
  std::map<std::string, std::vector<double>> it;
  for (const IterationRecord& r : report.result.iterations) {
    it["replica"].push_back(r.replica);
    it["start_s"].push_back(r.start_s);
    it["time_s"].push_back(r.time_s);
    it["requests"].push_back(r.requests);
    it["prefill_tokens"].push_back(r.prefill_tokens);
    it["decode_tokens"].push_back(r.decode_tokens);
    it["kv_blocks_used"].push_back(static_cast<double>(r.kv_blocks_used));
  }
  py::dict iterations;
  for (const char* k :
       {"replica", "start_s", "time_s", "requests", "prefill_tokens", "decode_tokens", "kv_blocks_used"})
    iterations[k] = py::cast(it[k]);
  py::dict out;
  out["report"] = serving_report_json(report, -1);
  out["text"] = serving_report_text(report);
  out["requests"] = requests;
  out["iterations"] = iterations;
  return out;
}

// Kernel calibration (`clustersim calibrate`): measurements cross as KernelMeasurement objects, the
// profile as its JSON file text. A GPU is a catalogue id; `profile_json` empty: the catalogue's values
// without any profile, else that profile applied.
GpuSpec gpu_with_profile(const std::string& gpu_id, const std::string& profile_json) {
  GpuSpec gpu = find_gpu(gpu_id, "--gpu", "");
  if (!profile_json.empty()) apply_calibration_profile(gpu, parse_calibration_profile(profile_json, "<profile>"));
  return gpu;
}

std::pair<std::vector<KernelMeasurement>, std::vector<std::string>> read_measurement_file(const std::string& path) {
  MeasurementSet set = read_measurements(path);
  return {std::move(set.kernels), std::move(set.notes)};
}

// calibrate's fit from Python's keywords: {measurements, held_out, gpu, description, data_dir, fixed}
// (KernelFitRequest's fields); None or absent: the request's default. The profile's JSON.
std::string fit_profile(const py::dict& keywords) {
  KernelFitRequest r;
  apply_keywords(keywords, "calibrate",
                 {{"measurements", set(r.measurements)},
                  {"held_out", set(r.held_out)},
                  {"gpu", set(r.gpu)},
                  {"description", set(r.description)},
                  {"data_dir", set(r.data_dir)},
                  {"fixed", set(r.fixed)}});
  const KernelFitInput input = kernel_fit_input(r);
  py::gil_scoped_release release;
  return calibration_profile_to_json(fit_kernel_profile(input));
}

// calibrate --from-trace from Python's keywords: {traces, workloads (each (workload JSON, file)),
// step, id, name, fidelity} (StackFitRequest's fields); None or absent: the request's default.
// (the stack profile's JSON, the fit's JSON), as the command writes them.
std::pair<std::string, std::string> fit_stack(const std::string& cluster_text, const std::string& cluster_file,
                                              const py::dict& keywords) {
  const ClusterSpec cluster = parse_cluster_spec(cluster_text, cluster_file);
  StackFitRequest r;
  const auto workloads = [&r](const py::handle& value) {
    for (const auto& [json, file] : value.cast<std::vector<std::pair<std::string, std::string>>>())
      r.workloads.push_back(parse_workload_spec(json, file));
  };
  apply_keywords(keywords, "calibrate",
                 {{"traces", set(r.traces)},
                  {"workloads", workloads},
                  {"step", set(r.step)},
                  {"id", set(r.id)},
                  {"name", set(r.name)},
                  {"fidelity", set(r.fidelity)}});
  const std::vector<TracedRun> runs = traced_runs(r);
  const StackFitOptions options = stack_fit_options(r);
  py::gil_scoped_release release;
  const StackFit fit = fit_stack_from_traces(cluster, runs, options);
  return {software_stack_to_json(fit.profile), stack_fit_to_json(fit)};
}

ErrorMetric error_metric(const std::string& name) {
  if (name == "time") return ErrorMetric::time;
  if (name == "throughput") return ErrorMetric::throughput;
  throw SpecError("metric", "", "expected \"time\" or \"throughput\", got \"" + name + "\"");
}

// kernel_accuracy(): per operation (first appearance order) then "all":
// (operation, count, median |error|, p90 |error|, median error).
using ErrorRow = std::tuple<std::string, std::size_t, double, double, double>;

std::vector<ErrorRow> accuracy(const std::string& gpu_id, const std::string& profile_json,
                               const std::vector<KernelMeasurement>& measurements, const std::string& metric) {
  const GpuSpec gpu = gpu_with_profile(gpu_id, profile_json);
  const AccuracySummary s = kernel_accuracy(gpu, measurements, error_metric(metric));
  std::vector<ErrorRow> rows;
  for (const auto& e : s.operations)
    rows.emplace_back(e.operation, e.count, e.median_abs_error, e.p90_abs_error, e.median_error);
  rows.emplace_back(s.all.operation, s.all.count, s.all.median_abs_error, s.all.p90_abs_error, s.all.median_error);
  return rows;
}

// Per measurement: (the model's time, the error kernel_accuracy counts for it).
std::vector<std::pair<double, double>> kernel_predictions(const std::string& gpu_id, const std::string& profile_json,
                                                          const std::vector<KernelMeasurement>& measurements,
                                                          const std::string& metric) {
  const GpuSpec gpu = gpu_with_profile(gpu_id, profile_json);
  const ErrorMetric m = error_metric(metric);
  std::vector<std::pair<double, double>> out;
  out.reserve(measurements.size());
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const std::span<const KernelMeasurement> one(&measurements[i], 1);
    out.emplace_back(kernel_time(gpu, measurements[i].op(), measurements[i].timing).time_s,
                     kernel_accuracy(gpu, one, m).all.median_error);
  }
  return out;
}

std::pair<Overrides, Overrides> split(const std::vector<std::string>& settings) {
  auto s = split_overrides(settings);
  return {std::move(s.cluster), std::move(s.workload)};
}

// For the isolation tests: a child process killed by `signal_number` must become a SimulationError in
// the parent, and the interpreter must live on.
void crash_in_child(int signal_number) {
  py::gil_scoped_release release;
  run_in_child_process([signal_number]() -> std::string {
    std::signal(signal_number, SIG_DFL);  // not Python's faulthandler, inherited through fork
    std::raise(signal_number);
    return "the signal did not kill the child";
  });
}

std::vector<std::string> fidelity_names() {
  std::vector<std::string> out;
  for (const auto& e : network_backends())
    out.emplace_back(e.fidelity);
  return out;
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> out;
  for (const auto& e : collective_algorithms())
    out.emplace_back(e.name);
  return out;
}

void translate_errors(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const SpecError& e) {
    const py::object cls = py::module_::import("clustersim.errors").attr("SpecError");
    const py::object err = cls(e.file(), e.json_path(), e.message());
    PyErr_SetObject(cls.ptr(), err.ptr());
  } catch (const SimulationError& e) {
    const py::object cls = py::module_::import("clustersim.errors").attr("SimulationError");
    PyErr_SetObject(cls.ptr(), cls(std::string(e.what())).ptr());
  }
}

}  // namespace
}  // namespace clustersim

PYBIND11_MODULE(_core, m) {
  using namespace clustersim;
  m.doc() = "clustersim's C++ core: spec parsing, simulation (in a child process), report JSON.";
  py::register_exception_translator(&translate_errors);

  m.def("load_cluster", &load_cluster, py::arg("source"), py::arg("overrides") = Overrides{},
        "Loads a cluster spec file or preset, applies overrides, validates: (normalized JSON, file).");
  m.def("parse_cluster", &parse_cluster, py::arg("text"), py::arg("file"), py::arg("overrides") = Overrides{},
        "Parses cluster spec JSON text, applies overrides, validates: (normalized JSON, file).");
  m.def("size_cluster", &size_cluster, py::arg("text"), py::arg("file"), py::arg("gpus"),
        "compare --gpus: (cluster JSON sized to gpus, its file, the changes, '') or ('', file, [], why it cannot).");
  m.def("size_cluster_to_budget", &size_cluster_to_budget, py::arg("text"), py::arg("file"), py::arg("workload_text"),
        py::arg("workload_file"), py::arg("budget_usd"),
        "compare --budget-usd: (cluster JSON at the most GPUs the budget buys for the workload, its file, the\n"
        "changes, '') or ('', file, [], why it cannot).");
  m.def("workload_at_any_size", &workload_at_any_size_text, py::arg("text"), py::arg("file"),
        "compare --gpus: the workload (text, file) with its data-parallel size left to the cluster.");
  m.def("load_workload", &load_workload, py::arg("source"), py::arg("overrides") = Overrides{},
        "Loads a workload spec file or preset, applies overrides, validates: (normalized JSON, file).");
  m.def("parse_workload", &parse_workload, py::arg("text"), py::arg("file"), py::arg("overrides") = Overrides{},
        "Parses workload spec JSON text, applies overrides, validates: (normalized JSON, file).");
  m.def("simulate", &simulate_json, py::arg("cluster_json"), py::arg("cluster_file"), py::arg("workload_json"),
        py::arg("workload_file"), py::arg("options") = py::dict(),
        "Simulates one training step in a child process; returns the report as one-line JSON.\n"
        "options: {fidelity, algorithm (a name or {group: name, '*': name}), network_profile, timeline_path,\n"
        "timeline_classes, trace_host}; absent or None: the core's defaults. A timeline_path: the step's Chrome\n"
        "trace is written there.");
  m.def("collective", &collective_json, py::arg("cluster_json"), py::arg("cluster_file"),
        py::arg("options") = py::dict(),
        "Simulated nccl-tests (clustersim collective --json) in a child process: the rows as one-line JSON.\n"
        "options: {op, ranks, sizes, min_bytes, max_bytes, step_factor, peer_offset, fidelity, algorithm,\n"
        "network_profile}; absent or None: the defaults of `clustersim collective`.");
  m.def("collective_columns", &collective_columns,
        "The columns of collective()'s rows, in order: the keys `clustersim collective --json` writes for a row.");
  m.def("topology_info", &topology_info_json, py::arg("cluster_json"), py::arg("cluster_file"),
        "The cluster's topology metrics as JSON (clustersim topology info --json).");
  m.def("topology_export", &topology_export, py::arg("cluster_json"), py::arg("cluster_file"), py::arg("format"),
        "The cluster exported as text (clustersim topology export --format F).");
  m.def("export_formats", &export_format_names, "Names of the topology export formats.");
  m.def("split_overrides", &split, py::arg("settings"),
        "Splits 'key.path=value' settings into (cluster, workload) overrides, as the CLI's --set does.");
  m.def(
      "report_text", [](const std::string& json) { return Report::from_json(json).to_text(); }, py::arg("report_json"),
      "The CLI's text summary of a report given as JSON.");
  m.def("report_schema", &report_schema_json,
        "The report's keys as JSON text: {sections: {path: [{key, type, default}]}} (sim/report/report_schema.hpp),\n"
        "from which the package builds its dataclasses and DataFrame columns.");
  m.def("cluster_presets", &cluster_preset_names, "Names of the built-in cluster presets.");
  m.def("workload_presets", &workload_preset_names, "Names of the built-in workload presets.");
  m.def(
      "cluster_schema", [] { return spec_fields_json(cluster_schema()); },
      "The cluster spec's declared keys (its node, fabric, power and cost blocks) as JSON text, as workload_schema().");
  m.def(
      "workload_schema", [] { return spec_fields_json(workload_schema()); },
      "The workload spec's keys as JSON text: [{path, section, key, type, stable, required, min, max, default,\n"
      "default_doc, unit, choices, doc}] (workloads/workload_schema.hpp).");
  m.def("gpu_ids", &gpu_catalogue_ids, "Ids of the GPU catalogue entries.");
  m.def("fidelities", &fidelity_names, "Registered network backends (fidelity levels).");
  m.def("collective_algorithms", &algorithm_names, "Registered collective algorithms.");
  m.def("write_output_file", &write_output_file, py::arg("path"), py::arg("text"), py::arg("what"),
        "Writes text to path whole or not at all (sim/core/output_file: a temporary file renamed over it); an\n"
        "error names the path and `what` (\"HTML report\").");
  m.def("compare", &compare_json, py::arg("workload"), py::arg("tokens"), py::arg("designs"),
        "clustersim compare's comparison of simulated designs [(design, report JSON or '', error)]:\n"
        "(comparison JSON, the CLI's table, the purchase report's HTML page).");
  m.def("serve", &serve_dict, py::arg("options"),
        "clustersim serve: {report: JSON text, text: the CLI's summary, requests: {column: list}, iterations:\n"
        "{column: list}}. options: {cluster, serving, set: ['k=v', ...], timeline_path, timeline_requests,\n"
        "sample_interval_s, iteration_records}; absent or None: the command's defaults.");
  m.def("find_max_rate", &find_max_rate_json, py::arg("options"),
        "clustersim serve --find-max-rate --json: the highest arrival rate meeting the SLO (JSON text: max_rate_rps,\n"
        "upper_bound_reached, probes, report). options: as serve's.");
  m.def("compare_serving", &compare_serving_json, py::arg("options"),
        "clustersim compare --serving --json: one serving deployment on several designs, each run and its\n"
        "highest rate meeting the SLO: (JSON text, the CLI's table). options: {clusters: [...], serving, set}.");
  m.def("search_layouts", &search_layouts_json, py::arg("options"),
        "clustersim serve --search-layouts --json: per design and tp x pp layout the fewest replicas meeting the\n"
        "SLO at the target rate, their cost, the cheapest and the frontier: (JSON text, the CLI's table).\n"
        "options: {clusters: [...], serving, set: ['k=v', ...], target_rate_rps, tp: [...], pp: [...]}.");
  m.def(
      "serving_schema", [] { return spec_fields_json(serving_schema()); },
      "The serving spec's keys as JSON (sim/serving/serving_spec.cpp; docs/specs.md's table).");
  m.def("serving_presets", &serving_preset_names, "Names of the built-in serving presets.");
  m.def("serving_schedulers", &serving_scheduler_names, "Registered serving schedulers (batching policies).");
  m.def("validation_datasets", &validation_dataset_names, "Names of the compiled-in validation datasets.");
  m.def("validate_serving", &validate_serving_json, py::arg("dataset"), py::arg("options") = py::dict(),
        "clustersim validate SERVING_DATASET: (JSON text, the CLI's table). options: {limit, scheduler}.");
  m.def("serving_validation_datasets", &serving_validation_names, "The compiled-in serving validation datasets.");
  m.def("validate", &validate_json, py::arg("dataset"), py::arg("options") = py::dict(),
        "clustersim validate DATASET: (JSON document, the CLI's table). options: {fidelity, jobs, limit}; absent\n"
        "or None: the command's defaults (flow, 2 jobs, every row).");

  py::class_<KernelMeasurement>(m, "KernelMeasurement",
                                "One measured kernel time (sim/hardware/kernel_measurement.hpp).")
      .def_readonly("gpu", &KernelMeasurement::gpu)
      .def_readonly("operation", &KernelMeasurement::operation)
      .def_readonly("name", &KernelMeasurement::name)
      .def_property_readonly("kernel", [](const KernelMeasurement& k) { return std::string(to_string(k.kernel)); })
      .def_property_readonly("precision",
                             [](const KernelMeasurement& k) { return std::string(to_string(k.precision)); })
      .def_readonly("flops", &KernelMeasurement::flops)
      .def_readonly("bytes", &KernelMeasurement::bytes)
      .def_readonly("m", &KernelMeasurement::m)
      .def_readonly("n", &KernelMeasurement::n)
      .def_readonly("k", &KernelMeasurement::k)
      .def_readonly("batch", &KernelMeasurement::batch)
      .def_readonly("time_s", &KernelMeasurement::time_s)
      .def_readonly("repetitions", &KernelMeasurement::repetitions)
      .def_readonly("file", &KernelMeasurement::file)
      .def_readonly("source", &KernelMeasurement::source)
      .def_readonly("group", &KernelMeasurement::group)
      .def_readonly("tp", &KernelMeasurement::tp)
      .def_property_readonly("timing", [](const KernelMeasurement& k) { return std::string(to_string(k.timing)); });
  m.def("read_measurements", &read_measurement_file, py::arg("path"),
        "Reads one measurement file (PATH or PATH#SELECTOR): (kernel measurements, notes on what was skipped).");
  m.def("fit_profile", &fit_profile, py::arg("options"),
        "clustersim calibrate MEASUREMENTS: fits the kernel model of a catalogue GPU to measurements; the\n"
        "calibration profile's JSON. options: {measurements, held_out, gpu, description, data_dir, fixed}; absent or\n"
        "None: the command's defaults (sim/api/kernel_fit_request.hpp).");
  m.def("fit_stack", &fit_stack, py::arg("cluster_json"), py::arg("cluster_file"), py::arg("options"),
        "calibrate --from-trace: fits a software-stack profile to PyTorch profiler traces; returns (profile JSON,\n"
        "fit JSON). options: {traces, workloads (each (workload JSON, file)), step, id, name, fidelity}; absent\n"
        "or None: the command's defaults (sim/api/stack_fit_request.hpp).");
  m.def("kernel_accuracy", &accuracy, py::arg("gpu"), py::arg("profile_json"), py::arg("measurements"),
        py::arg("metric") = "time",
        "The kernel model's error per operation, then 'all': [(operation, count, median |e|, p90 |e|, median e)].\n"
        "profile_json '': the catalogue's values; metric 'time' or 'throughput'.");
  m.def("kernel_predictions", &kernel_predictions, py::arg("gpu"), py::arg("profile_json"), py::arg("measurements"),
        py::arg("metric") = "time",
        "Per measurement: (the model's time in seconds, its error as kernel_accuracy counts it).");
  m.def("calibration_profiles", &calibration_profile_names, "GPU ids of the compiled-in calibration profiles.");
  m.def(
      "select_measurements",
      [](const std::vector<std::string>& arguments, const std::string& data_dir, const std::string& gpu) {
        MeasurementSelection s = select_measurements(arguments, data_dir, gpu);
        return std::make_tuple(std::move(s.kernels), std::move(s.notes), std::move(s.gpu));
      },
      py::arg("arguments"), py::arg("data_dir") = "", py::arg("gpu") = "",
      "calibrate's reading of measurement arguments: (the measurements of `gpu`, notes on what was skipped, the\n"
      "GPU); gpu '': the one GPU the files name (SpecError otherwise).");
  m.def(
      "default_measurement_data_dir", [] { return std::string(kDefaultMeasurementDataDir); },
      "Where calibrate looks up relative measurement paths by default (calibration/data).");
  m.def(
      "compared_by_throughput", [](const std::string& operation) { return compared_by_throughput(operation); },
      py::arg("operation"), "Whether calibrate compares this operation's records by throughput (GEMM tables).");
  m.def("is_compiled_in_measurement_file", &is_compiled_in_measurement_file, py::arg("path"),
        "True for a measurement file the library carries (calibration/power_cap/), readable from any folder.");
  m.def(
      "calibration_profile",
      [](const std::string& gpu) { return calibration_profile_to_json(shipped_calibration_profile(gpu)); },
      py::arg("gpu"), "The compiled-in calibration profile of a GPU, as JSON.");
  m.def(
      "parse_calibration_profile",
      [](const std::string& text, const std::string& file) {
        return calibration_profile_to_json(parse_calibration_profile(text, file));
      },
      py::arg("text"), py::arg("file"), "Validates a calibration profile's JSON: the profile as calibrate writes it.");
  m.def(
      "write_output_file",
      [](const std::string& path, const std::string& text, const std::string& what) {
        write_output_file(path, text, what);
      },
      py::arg("path"), py::arg("text"), py::arg("what"),
      "Writes an output file whole or not at all (a temporary beside it, renamed over it); SpecError when it "
      "cannot be written.");
  m.def("_crash_in_child", &crash_in_child, py::arg("signal_number"),
        "Test hook: a child process that dies of `signal_number` (the parent raises SimulationError).");
}
