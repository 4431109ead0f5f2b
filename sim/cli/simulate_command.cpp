#include <iostream>
#include <stdexcept>

#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/overrides.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "sim/simulate.hpp"

namespace clustersim::cli {

int run_simulate(const std::vector<std::string>& args) {
  const Arguments a(
      args,
      {"cluster", "workload", "fidelity", "algorithm", "network-profile", "out", "timeline", "timeline-ranks", "set"},
      {"json"});
  if (!a.positional().empty()) throw UsageError("unexpected argument '" + a.positional().front() + "'");
  // The outputs are checked before the simulation: never a report lost after the run, nor a spec
  // overwritten by its own report.
  std::vector<OutputPath> outputs;
  if (const auto out = a.value("out")) outputs.push_back({*out, "report file"});
  if (const auto timeline = a.value("timeline")) outputs.push_back({*timeline, "timeline file"});
  check_output_paths(outputs, {a.required("cluster"), a.required("workload")});
  const SplitOverrides overrides = split_overrides(a.values("set"));
  const ClusterSpec cluster = load_cluster_spec(a.required("cluster"), overrides.cluster);
  const WorkloadSpec workload = load_workload_spec(a.required("workload"), overrides.workload);
  SimulationOptions options;
  options.fidelity = a.value("fidelity").value_or("flow");
  // --algorithm NAME (every communicator) or GROUP=NAME (one communicator), repeatable.
  for (const std::string& v : a.values("algorithm")) {
    const auto eq = v.find('=');
    if (eq == std::string::npos) {
      options.collective_algorithm = v;
    } else {
      options.algorithm_by_communicator[v.substr(0, eq)] = v.substr(eq + 1);
    }
  }
  options.network_profile = a.value("network-profile").value_or(options.network_profile);
  options.timeline_path = a.value("timeline").value_or("");
  if (const auto classes = a.value("timeline-ranks")) {
    try {
      const long n = std::stol(*classes);
      if (n < 1) throw std::invalid_argument("");
      options.timeline_classes = static_cast<std::size_t>(n);
    } catch (const std::exception&) {
      throw SpecError("--timeline-ranks", "", "expected a positive number of rank classes, got \"" + *classes + "\"");
    }
  }

  const Report report = simulate(cluster, workload, options);
  const std::string json = report.to_json(2);
  if (const auto out = a.value("out")) {
    write_output_file(*out, json + "\n", "report file");
  }
  if (a.flag("json")) {
    std::cout << json << "\n";
  } else {
    std::cout << report.to_text();
  }
  return 0;
}

}  // namespace clustersim::cli
