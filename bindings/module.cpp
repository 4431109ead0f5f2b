// clustersim._core: the thin C++ layer under the Python package `clustersim`.
//
// Specs cross the boundary as JSON text plus the name of the file they came from (for error
// messages); reports and topology metrics come back as JSON text. Everything else (objects,
// DataFrames, sweeps, plots) is Python, in bindings/python/clustersim. C++ errors become the
// package's own exceptions:
//   clustersim::SpecError       -> clustersim.errors.SpecError(file, json_path, message)  (a ValueError)
//   clustersim::SimulationError -> clustersim.errors.SimulationError(message)             (a RuntimeError)
// with the same text the CLI prints.
#include <csignal>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "sim/cli/overrides.hpp"
#include "sim/collectives/collective_algorithm.hpp"
#include "sim/core/child_process.hpp"
#include "sim/core/error.hpp"
#include "sim/core/spec_document.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/report/report.hpp"
#include "sim/simulate.hpp"
#include "topologies/cluster.hpp"
#include "topologies/cluster_spec.hpp"
#include "topologies/topology_export.hpp"
#include "topologies/topology_metrics.hpp"
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

SpecText load_workload(const std::string& source, const Overrides& overrides) {
  const WorkloadSpec spec = load_workload_spec(source, overrides);
  return {workload_spec_to_json(spec), spec.source_file};
}

SpecText parse_workload(const std::string& text, const std::string& file, const Overrides& overrides) {
  const WorkloadSpec spec = parse_workload_spec(with_overrides(text, file, overrides), file);
  return {workload_spec_to_json(spec), spec.source_file};
}

// One simulation in a child process (the C++ simulate() forks); the GIL is released while it runs so
// that other Python threads (a sweep's) go on. Empty strings keep SimulationOptions' defaults.
std::string simulate_json(const std::string& cluster_text, const std::string& cluster_file,
                          const std::string& workload_text, const std::string& workload_file,
                          const std::string& fidelity, const std::string& algorithm,
                          const std::map<std::string, std::string>& algorithm_by_group,
                          const std::string& network_profile) {
  const ClusterSpec cluster = parse_cluster_spec(cluster_text, cluster_file);
  const WorkloadSpec workload = parse_workload_spec(workload_text, workload_file);
  SimulationOptions options;
  if (!fidelity.empty()) options.fidelity = fidelity;
  if (!algorithm.empty()) options.collective_algorithm = algorithm;
  options.algorithm_by_communicator = algorithm_by_group;
  if (!network_profile.empty()) options.network_profile = network_profile;
  py::gil_scoped_release release;
  return simulate(cluster, workload, options).to_json(-1);
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

std::pair<Overrides, Overrides> split(const std::vector<std::string>& settings) {
  auto s = cli::split_overrides(settings);
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
  m.def("load_workload", &load_workload, py::arg("source"), py::arg("overrides") = Overrides{},
        "Loads a workload spec file or preset, applies overrides, validates: (normalized JSON, file).");
  m.def("parse_workload", &parse_workload, py::arg("text"), py::arg("file"), py::arg("overrides") = Overrides{},
        "Parses workload spec JSON text, applies overrides, validates: (normalized JSON, file).");
  m.def("simulate", &simulate_json, py::arg("cluster_json"), py::arg("cluster_file"), py::arg("workload_json"),
        py::arg("workload_file"), py::arg("fidelity") = "", py::arg("algorithm") = "",
        py::arg("algorithm_by_group") = std::map<std::string, std::string>{}, py::arg("network_profile") = "",
        "Simulates one training step in a child process; returns the report as one-line JSON.\n"
        "Empty fidelity / algorithm / network_profile: the core's defaults.");
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
  m.def("cluster_presets", &cluster_preset_names, "Names of the built-in cluster presets.");
  m.def("workload_presets", &workload_preset_names, "Names of the built-in workload presets.");
  m.def("gpu_ids", &gpu_catalogue_ids, "Ids of the GPU catalogue entries.");
  m.def("fidelities", &fidelity_names, "Registered network backends (fidelity levels).");
  m.def("collective_algorithms", &algorithm_names, "Registered collective algorithms.");
  m.def("_crash_in_child", &crash_in_child, py::arg("signal_number"),
        "Test hook: a child process that dies of `signal_number` (the parent raises SimulationError).");
}
