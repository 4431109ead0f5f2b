// clustersim compare: one workload on several cluster designs, one table (sim/cost/design_comparison).
#include <cmath>
#include <exception>
#include <functional>
#include <iostream>
#include <optional>

#include "sim/api/design_sizing.hpp"
#include "sim/api/serving_comparison.hpp"
#include "sim/api/simulation_request.hpp"
#include "sim/api/spec_overrides.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "sim/cost/comparison_html.hpp"
#include "sim/cost/design_comparison.hpp"
#include "sim/simulate.hpp"

namespace clustersim::cli {
namespace {

constexpr double kDefaultTokens = 1e12;
constexpr double kMaxBudgetUsd = 1e13;

double parse_budget_usd(const std::string& text) {
  const auto v = parse_si_quantity(text);
  if (!v || !(*v <= kMaxBudgetUsd))
    throw SpecError("--budget-usd", "",
                    "expected a capital budget in US dollars from 1 to 1e13 (e.g. 50M, 2.5e8), got \"" + text + "\"");
  return *v;
}

}  // namespace

// compare --serving S: one serving deployment on every design (sim/api/serving_comparison).
int run_serving_compare(const Arguments& a) {
  for (const char* training_only : {"workload", "fidelity", "tokens", "html", "gpus", "budget-usd", "jobs"})
    if (a.value(training_only))
      throw UsageError(std::string("--") + training_only + " is for a training workload, not --serving");
  const ServingComparison c = compare_serving(a.values("cluster"), a.required("serving"), a.values("set"));
  if (a.flag("json"))
    std::cout << serving_comparison_json(c, 2) << "\n";
  else
    std::cout << serving_comparison_text(c);
  for (const ServingDesignRow& row : c.rows)
    if (!row.error.empty()) return 1;
  return 0;
}

int run_compare(const std::vector<std::string>& args) {
  const Arguments a(
      args, {"cluster", "workload", "serving", "fidelity", "tokens", "set", "html", "gpus", "budget-usd", "jobs"},
      {"json"});
  if (!a.positional().empty()) throw UsageError("unexpected argument '" + a.positional().front() + "'");
  const std::vector<std::string> sources = a.values("cluster");
  if (sources.empty()) throw UsageError("give at least one --cluster");
  if (a.value("serving")) return run_serving_compare(a);
  const auto tokens_text = a.value("tokens");
  const double tokens = tokens_text ? parse_token_count(*tokens_text, "--tokens") : kDefaultTokens;
  if (const auto html = a.value("html")) {
    std::vector<std::string> inputs = sources;
    inputs.push_back(a.required("workload"));
    check_output_paths({{*html, "HTML report"}}, inputs);
  }
  const SplitOverrides overrides = split_overrides(a.values("set"));
  WorkloadSpec workload = load_workload_spec(a.required("workload"), overrides.workload);
  std::vector<ClusterSpec> clusters;  // every spec is checked before any simulation runs
  for (const std::string& source : sources)
    clusters.push_back(load_cluster_spec(source, overrides.cluster));
  // --gpus N or --budget-usd X: every design sized by its own rules (sim/api/design_sizing; one that
  // cannot be is a row with the reason), the workload's data-parallel size left to the cluster.
  std::function<SizedDesign(const ClusterSpec&)> size_design_as_asked;
  std::string sized_to;  // "1024 GPUs", "a budget of 50M USD"
  if (const auto gpus_text = a.value("gpus")) {
    const long long gpus = whole_number_option("--gpus", *gpus_text, 1, 1LL << 22, "a number of GPUs");
    size_design_as_asked = [gpus](const ClusterSpec& c) { return size_design(c, gpus); };
    sized_to = *gpus_text + " GPUs";
  }
  if (const auto budget_text = a.value("budget-usd")) {
    if (a.value("gpus")) throw UsageError("give --gpus or --budget-usd, not both");
    const double budget = parse_budget_usd(*budget_text);
    size_design_as_asked = [&workload, budget](const ClusterSpec& c) {
      return size_design_to_budget(c, workload, budget).design;
    };
    sized_to = "a budget of " + *budget_text + " USD";
  }
  std::vector<std::string> sizing_errors(clusters.size());
  std::vector<std::vector<std::string>> sizing_changes(clusters.size());
  if (size_design_as_asked) {
    workload = workload_at_any_size(std::move(workload));
    for (std::size_t i = 0; i < clusters.size(); ++i) {
      try {
        SizedDesign sized = size_design_as_asked(clusters[i]);
        clusters[i] = std::move(sized.cluster);
        sizing_changes[i] = std::move(sized.changes);
      } catch (const SpecError& e) {
        sizing_errors[i] = "cannot be sized to " + sized_to + ": " + e.what();
      }
    }
  }
  SimulationRequest request;
  request.fidelity = a.value("fidelity");
  SimulationOptions options = simulation_options(request);
  // Each design's run of the tokens with failures, checkpoints and restarts ranks it (docs/time_to_train.md).
  options.train_tokens = tokens;

  // --jobs N: the designs simulated N at once, each in its own child process (simulate_all, as
  // validate's rows); outcome i is design i's, so the output is the serial run's byte for byte.
  const std::size_t jobs = simulation_jobs(a.value("jobs"));
  std::vector<std::size_t> simulated;
  std::vector<SimulationCase> cases;
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    if (!sizing_errors[i].empty()) continue;
    simulated.push_back(i);
    cases.push_back({&clusters[i], &workload});
  }
  std::vector<SimulationOutcome> outcomes = simulate_all(cases, options, jobs);
  std::vector<SimulationOutcome> outcome_of(clusters.size());
  for (std::size_t k = 0; k < simulated.size(); ++k)
    outcome_of[simulated[k]] = std::move(outcomes[k]);

  std::vector<DesignRow> rows;
  bool failed = false;
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    DesignRow row;
    row.design = clusters[i].name.empty() ? sources[i] : clusters[i].name;  // repeated: numbered by compare_designs
    if (!sizing_errors[i].empty()) {
      row.error = sizing_errors[i];
      failed = true;
      rows.push_back(std::move(row));
      continue;
    }
    if (!sizing_changes[i].empty())
      std::cerr << "compare: " << row.design << " sized to " << sized_to << ": "
                << sizing_changes_text(sizing_changes[i]) << "\n";
    try {
      if (outcome_of[i].error) std::rethrow_exception(outcome_of[i].error);
      row.report = std::move(outcome_of[i].report);
    } catch (const SimulationError& e) {
      row.error = e.what();
      failed = true;
    } catch (const SpecError& e) {
      if (!size_design_as_asked) throw;  // the specs as given: bad input
      row.error = std::string("cannot run at ") + std::to_string(clusters[i].gpu_count()) + " GPUs: " + e.what();
      failed = true;
    }
    rows.push_back(std::move(row));
  }
  const DesignComparison comparison = compare_designs(workload.name, tokens, std::move(rows));
  if (const auto html = a.value("html")) write_output_file(*html, comparison_to_html(comparison), "HTML report");
  if (a.flag("json"))
    std::cout << comparison_to_json(comparison) << "\n";
  else
    std::cout << comparison_to_text(comparison);
  return failed ? 1 : 0;
}

}  // namespace clustersim::cli
