#include <cstdint>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "sim/api/simulation_request.hpp"
#include "sim/api/spec_overrides.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "sim/simulate.hpp"

namespace clustersim::cli {
namespace {

// The value of --OPTION read whole by `parse` (std::stod / std::stoll with the characters used), or
// none when not given; anything else is a SpecError naming the option (its range is the request's).
template <typename Parse>
auto number_option(const Arguments& a, const char* option, Parse parse)
    -> std::optional<decltype(parse(std::string(), nullptr))> {
  const auto v = a.value(option);
  if (!v) return std::nullopt;
  try {
    std::size_t used = 0;
    const auto value = parse(*v, &used);
    if (used == v->size()) return value;
  } catch (const std::exception&) {
  }
  throw SpecError(std::string("--") + option, "", "expected a number, got \"" + *v + "\"");
}

}  // namespace

int run_simulate(const std::vector<std::string>& args) {
  const Arguments a(args,
                    {"cluster", "workload", "fidelity", "algorithm", "network-profile", "out", "timeline",
                     "timeline-ranks", "trace-host", "set", "train-tokens", "checkpoint-interval-s", "runs", "seed"},
                    {"json", "exhaustive", "adaptive-classes"});
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
  SimulationRequest request;
  request.fidelity = a.value("fidelity");
  for (const std::string& v : a.values("algorithm"))
    add_algorithm(request, v);  // NAME (every communicator) or GROUP=NAME, repeatable
  request.network_profile = a.value("network-profile");
  request.timeline_path = a.value("timeline");
  request.trace_host = a.value("trace-host");
  if (a.flag("exhaustive")) request.exhaustive = true;
  if (a.flag("adaptive-classes")) request.adaptive_classes = true;  // the default since session 17
  if (const auto classes = a.value("timeline-ranks")) {
    try {
      request.timeline_classes = std::stoll(*classes);
    } catch (const std::exception&) {
      throw SpecError("--timeline-ranks", "", "expected a positive number of rank classes, got \"" + *classes + "\"");
    }
  }
  request.train_tokens = a.value("train-tokens");
  request.checkpoint_interval_s =
      number_option(a, "checkpoint-interval-s", [](const std::string& s, std::size_t* n) { return std::stod(s, n); });
  request.time_to_train_runs = number_option(
      a, "runs", [](const std::string& s, std::size_t* n) { return static_cast<std::int64_t>(std::stoll(s, n)); });
  request.time_to_train_seed = number_option(
      a, "seed", [](const std::string& s, std::size_t* n) { return static_cast<std::int64_t>(std::stoll(s, n)); });
  const SimulationOptions options = simulation_options(request);

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
