// clustersim calibrate: fit the GPU kernel model to measurements and write a calibration profile, or
// (--report) print the error of the compiled-in profiles on measurements kept out of their fit.
//
//   clustersim calibrate MEASUREMENTS... [--gpu ID] [--out profile.json] [--held-out FILE ...]
//                        [--fixed KEY,...] [--description TEXT] [--data DIR]
//   clustersim calibrate --report [--gpu ID] [--data DIR] [--json]
//   clustersim calibrate --from-trace TRACE --workload SPEC [--from-trace TRACE --workload SPEC ...]
//                        --cluster CLUSTER [--step last|N] [--id ID] [--name TEXT] [--fidelity F]
//                        [--out profile.json] [--json]
//
// --from-trace fits a software-stack profile (workloads/stacks/README.md) to PyTorch profiler traces of
// one step of rank 0, each with the workload spec it ran (pairs in order), on the cluster they ran on
// (sim/stack_fit.hpp); `training.stack: "profile.json"` then runs any workload with it.
//
// MEASUREMENTS are files in the formats of sim/hardware/kernel_measurement.hpp (clustersim measurement
// JSON, Vidur mlp.csv, published microbench.json), optionally with a "#id..id" record selector. A path
// that does not exist as given is looked up in --data (default calibration/data, the measurements shipped
// with the repository: calibration/data/README.md);
// the profile records the paths as given.
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/api/kernel_fit_request.hpp"
#include "sim/api/measurement_files.hpp"
#include "sim/api/stack_fit_request.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/csv_table.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_accuracy.hpp"
#include "sim/hardware/kernel_fit.hpp"
#include "sim/hardware/kernel_measurement.hpp"
#include "sim/stack_fit.hpp"

namespace clustersim::cli {
namespace {

std::string percent(double v) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(1) << 100.0 * v << "%";
  return o.str();
}

void print_table(std::ostream& o, const std::string& title, const AccuracySummary& s) {
  o << "  " << title << "\n";
  o << "    " << std::left << std::setw(28) << "operation" << std::right << std::setw(7) << "count" << std::setw(10)
    << "median" << std::setw(10) << "p90" << std::setw(10) << "signed"
    << "\n";
  auto row = [&](const ErrorStats& e) {
    o << "    " << std::left << std::setw(28) << e.operation << std::right << std::setw(7) << e.count << std::setw(10)
      << percent(e.median_abs_error) << std::setw(10) << percent(e.p90_abs_error) << std::setw(10)
      << percent(e.median_error) << "\n";
  };
  for (const auto& e : s.operations)
    row(e);
  if (s.operations.size() > 1) row(s.all);
}

nlohmann::ordered_json summary_json(const AccuracySummary& s) {
  auto stats = [](const ErrorStats& e) {
    return nlohmann::ordered_json{{"operation", e.operation},
                                  {"count", e.count},
                                  {"median_abs_error", e.median_abs_error},
                                  {"p90_abs_error", e.p90_abs_error},
                                  {"median_error", e.median_error}};
  };
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const auto& e : s.operations)
    ops.push_back(stats(e));
  return {{"operations", ops}, {"all", stats(s.all)}};
}

int run_fit(const Arguments& a) {
  KernelFitRequest request;
  request.measurements = a.positional();
  request.held_out = a.values("held-out");
  for (const std::string& list : a.values("fixed"))
    for (std::string& key : split_csv_line(list)) request.fixed.push_back(std::move(key));
  request.gpu = a.value("gpu");
  request.description = a.value("description");
  request.data_dir = a.value("data");
  const std::string data_dir = measurement_data_dir(request.data_dir);
  if (request.measurements.empty()) throw UsageError("give the measurement files to fit, or --report");
  if (const auto out = a.value("out")) {
    std::vector<std::string> read;  // FILE or FILE#IDS, as given and under --data
    for (const auto& list : {request.measurements, request.held_out})
      for (const auto& in : list) {
        const std::string file = in.substr(0, in.find('#'));
        read.push_back(file);
        read.push_back(data_dir + "/" + file);
      }
    check_output_paths({{*out, "profile"}}, read);
  }
  const KernelFitInput input = kernel_fit_input(request);
  const std::string& id = input.selection.gpu;
  const GpuSpec& base = input.base;
  const std::vector<std::string>& notes = input.selection.notes;
  const std::vector<KernelMeasurement>& measurements = input.selection.kernels;
  const KernelFitOptions& options = input.options;
  const CalibrationProfile profile = fit_kernel_profile(input);
  const std::string json = calibration_profile_to_json(profile);

  std::ostream& o = a.value("out") ? std::cout : std::cerr;
  o << "calibrate " << id << ": " << measurements.size() << " kernel measurements\n";
  for (const auto& n : notes)
    o << "  note: " << n << "\n";
  o << "  " << std::left << std::setw(26) << "parameter" << std::right << std::setw(12) << "value" << std::setw(8)
    << "count" << std::setw(10) << "median" << std::setw(10) << "p90"
    << "\n";
  for (const auto& p : profile.parameters) {
    o << "  " << std::left << std::setw(26) << p.name << std::right << std::setw(12) << std::setprecision(5) << p.value
      << std::setw(8) << p.residual.measurements << std::setw(10) << percent(p.residual.median_abs_error)
      << std::setw(10) << percent(p.residual.p90_abs_error) << "\n";
  }
  if (!options.held_out.empty()) {
    GpuSpec fitted = base;
    apply_calibration_profile(fitted, profile);
    const std::vector<KernelMeasurement> held_out = select_measurements(options.held_out, data_dir, id).kernels;
    std::vector<KernelMeasurement> times, tables;
    for (const auto& m : held_out)
      (compared_by_throughput(m.operation) ? tables : times).push_back(m);
    if (!times.empty()) print_table(o, "held out, kernel time |error|:", kernel_accuracy(fitted, times));
    if (!tables.empty())
      print_table(o, "held out, GEMM TFLOP/s |error|:", kernel_accuracy(fitted, tables, ErrorMetric::throughput));
  }
  if (auto out = a.value("out")) {
    write_output_file(*out, json, "profile");
    o << "wrote " << *out << "\n";
  } else {
    std::cout << json;
  }
  return 0;
}

// The report of one profile: its fit set, its held-out measurements, and a second split that refits
// on the tensor-parallel degree 1 rows of the Vidur tables and tests on the other degrees.
nlohmann::ordered_json report_profile(const CalibrationProfile& profile, const std::string& data_dir, bool text) {
  GpuSpec gpu = find_gpu(profile.gpu, "calibration profile " + profile.name, "/gpu");
  const GpuSpec base = gpu;
  apply_calibration_profile(gpu, profile);
  const std::vector<KernelMeasurement> fit = select_measurements(profile.fitted_on, data_dir, profile.gpu).kernels;
  const std::vector<KernelMeasurement> held_out = select_measurements(profile.held_out, data_dir, profile.gpu).kernels;
  std::vector<KernelMeasurement> times, tables;
  for (const auto& m : held_out)
    (compared_by_throughput(m.operation) ? tables : times).push_back(m);

  // Second split: by tensor-parallel degree, over every Vidur row of both sets.
  std::vector<KernelMeasurement> tp1, tp_other;
  for (const auto* set : {&fit, &held_out}) {
    for (const auto& m : *set) {
      if (m.tp == 1) tp1.push_back(m);
      if (m.tp > 1) tp_other.push_back(m);
    }
  }
  for (const auto& m : fit) {
    if (m.tp == 0) tp1.push_back(m);  // the non-Vidur records of the fit (attention, fp8 GEMMs)
  }
  std::optional<AccuracySummary> tp_split;
  if (!tp1.empty() && !tp_other.empty()) {
    GpuSpec refit = base;
    apply_calibration_profile(refit, fit_kernel_model(base, tp1, {}));
    tp_split = kernel_accuracy(refit, tp_other);
  }

  const AccuracySummary fit_summary = kernel_accuracy(gpu, fit);
  const AccuracySummary times_summary = kernel_accuracy(gpu, times);
  const AccuracySummary tables_summary = kernel_accuracy(gpu, tables, ErrorMetric::throughput);
  if (text) {
    std::cout << "calibration profile " << profile.name << ": " << profile.description << "\n";
    std::cout << "  fitted on:";
    for (const auto& f : profile.fitted_on)
      std::cout << " " << f;
    std::cout << "\n  held out: ";
    for (const auto& f : profile.held_out)
      std::cout << " " << f;
    std::cout << "\n";
    print_table(std::cout, "fit set, kernel time |error| (not a test: these measurements were fitted):", fit_summary);
    if (!times.empty()) print_table(std::cout, "held out, kernel time |error|:", times_summary);
    if (!tables.empty()) print_table(std::cout, "held out, published GEMM tables, TFLOP/s |error|:", tables_summary);
    if (tp_split)
      print_table(std::cout, "second split: refit on tensor-parallel degree 1, kernel time |error| on degrees 2, 4, 8:",
                  *tp_split);
    std::cout << "\n";
  }
  nlohmann::ordered_json j{{"profile", profile.name},
                           {"gpu", profile.gpu},
                           {"fitted_on", profile.fitted_on},
                           {"held_out", profile.held_out},
                           {"fit", summary_json(fit_summary)},
                           {"held_out_kernel_time", summary_json(times_summary)},
                           {"held_out_gemm_tflops", summary_json(tables_summary)}};
  if (tp_split) j["tp_split_kernel_time"] = summary_json(*tp_split);
  return j;
}

int run_report(const Arguments& a) {
  if (!a.positional().empty()) throw UsageError("--report takes no measurement files (it reads each profile's)");
  const std::string data_dir = measurement_data_dir(a.value("data"));
  std::vector<std::string> gpus;
  if (auto g = a.value("gpu")) {
    gpus.push_back(*g);
  } else {
    gpus = calibration_profile_names();
  }
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const auto& id : gpus) {
    all.push_back(report_profile(shipped_calibration_profile(id), data_dir, !a.flag("json")));
  }
  if (a.flag("json")) std::cout << all.dump(2) << "\n";
  return 0;
}

std::string ms(double s) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(3) << s * 1e3;
  return o.str();
}

int run_from_trace(const Arguments& a) {
  if (!a.positional().empty()) throw UsageError("--from-trace takes no measurement files");
  const std::vector<std::string> traces = a.values("from-trace");
  const std::vector<std::string> workloads = a.values("workload");
  if (workloads.size() != traces.size())
    throw UsageError("give one --workload SPEC (the configuration the trace ran) for each --from-trace TRACE: " +
                     std::to_string(traces.size()) + " traces, " + std::to_string(workloads.size()) + " workloads");
  if (const auto out = a.value("out")) {
    std::vector<std::string> read = traces;
    read.insert(read.end(), workloads.begin(), workloads.end());
    read.push_back(a.required("cluster"));
    check_output_paths({{*out, "stack profile"}}, read);
  }
  const ClusterSpec cluster = load_cluster_spec(a.required("cluster"));
  StackFitRequest request;
  request.traces = traces;
  for (const auto& w : workloads)
    request.workloads.push_back(load_workload_spec(w));
  request.step = a.value("step");
  request.id = a.value("id");
  request.name = a.value("name");
  request.fidelity = a.value("fidelity");
  const std::vector<TracedRun> runs = traced_runs(request);
  const StackFitOptions options = stack_fit_options(request);
  const StackFit fit = fit_stack_from_traces(cluster, runs, options);
  const std::string profile = software_stack_to_json(fit.profile);

  if (a.flag("json")) {
    std::cout << stack_fit_to_json(fit);
  } else {
    std::ostream& o = a.value("out") ? std::cout : std::cerr;
    o << "calibrate --from-trace on " << cluster.name << ": stack profile '" << fit.profile.id << "'\n";
    o << "  " << std::left << std::setw(15) << "kernel class" << std::right << std::setw(9) << "kernels" << std::setw(8)
      << "ops" << std::setw(14) << "measured_ms" << std::setw(14) << "modelled_ms" << std::setw(10) << "scale"
      << std::setw(10) << "residual"
      << "\n";
    for (const auto& c : fit.classes) {
      o << "  " << std::left << std::setw(15) << to_string(c.kernel) << std::right << std::setw(9) << c.trace_kernels
        << std::setw(8) << c.model_ops << std::setw(14) << ms(c.measured_s) << std::setw(14) << ms(c.modelled_s)
        << std::setw(10) << (c.fitted ? std::to_string(c.scale).substr(0, 6) : std::string("-")) << std::setw(10)
        << (c.fitted ? percent(c.residual) : std::string("-")) << "\n";
    }
    o << "  host per op: " << std::setprecision(4) << fit.host_op_s * 1e6
      << " us; fixed per step: " << ms(fit.step_fixed_s) << " ms";
    if (fit.communication_seen) o << "; NCCL time overlapped with compute: " << percent(fit.overlapped_fraction);
    o << "\n";
    for (const auto& r : fit.runs) {
      o << "  " << r.trace << (r.step.empty() ? "" : " " + r.step) << ": measured " << ms(r.measured_step_s)
        << " ms, built-in stack " << ms(r.builtin_step_s) << " ms ("
        << percent(r.builtin_step_s / r.measured_step_s - 1.0) << "), fitted " << ms(r.fitted_step_s) << " ms ("
        << percent(r.fitted_step_s / r.measured_step_s - 1.0) << ")\n";
    }
  }
  if (auto out = a.value("out")) {
    write_output_file(*out, profile, "stack profile");
    if (!a.flag("json")) std::cout << "wrote " << *out << "\n";
  } else if (!a.flag("json")) {
    std::cout << profile;
  }
  return 0;
}

}  // namespace

int run_calibrate(const std::vector<std::string>& args) {
  const Arguments a(args,
                    {"gpu", "out", "held-out", "fixed", "description", "data", "from-trace", "workload", "cluster", "step", "id",
                     "name", "fidelity"},
                    {"report", "json"});
  if (!a.values("from-trace").empty()) return run_from_trace(a);
  for (const char* o : {"workload", "cluster", "step", "id", "name", "fidelity"})
    if (a.value(o)) throw UsageError(std::string("--") + o + " goes with --from-trace");
  return a.flag("report") ? run_report(a) : run_fit(a);
}

}  // namespace clustersim::cli
