#include "sim/api/validation_run.hpp"

#include <algorithm>

#include "sim/core/error.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/simulate.hpp"

namespace clustersim {
namespace {

// A row's result from its simulation's outcome (a report, or the error the simulation raised).
RowResult row_result(const ValidationDataset& d, const ValidationCase& c, const SimulationOutcome& outcome) {
  RowResult r;
  r.measured = c.measured;
  try {
    if (outcome.error) std::rethrow_exception(outcome.error);
    const Report& report = *outcome.report;
    r.status = RowStatus::simulated;
    r.step_time_s = report.step_time_s;
    r.fits = report.memory.fits;
    r.predicted = d.metric->from_step(report.step_time_s, c.gpus, c.flops_per_step);
    r.error = (r.predicted - r.measured) / r.measured;
    if (d.peak_memory != nullptr && c.measured_peak_bytes > 0) {
      r.has_peak_memory = true;
      r.predicted_peak_bytes = d.peak_memory->bytes(report.memory);
      r.peak_memory_error = (r.predicted_peak_bytes - c.measured_peak_bytes) / c.measured_peak_bytes;
    }
    r.step_time_error = step_time_error(*d.metric, r.error);
    r.features = prediction_features(report.run.gpu, *c.workload, c.gpus);
  } catch (const SpecError& e) {
    r.status = RowStatus::unsupported;
    r.reason = (e.json_path().empty() ? "" : e.json_path() + ": ") + e.message();
  } catch (const std::exception& e) {
    r.status = RowStatus::failed;
    r.reason = e.what();
  }
  return r;
}

}  // namespace

ValidationResult run_validation(const ValidationDataset& dataset, const ValidationOptions& options) {
  if (find_network_backend(options.fidelity) == nullptr) {
    std::string known;
    for (const auto& b : network_backends())
      known += (known.empty() ? "" : ", ") + std::string(b.fidelity);
    throw SpecError("--fidelity", "", "expected one of " + known + ", got \"" + options.fidelity + "\"");
  }
  SimulationOptions sim;
  sim.fidelity = options.fidelity;
  ValidationResult result;
  result.rows.resize(dataset.cases.size());
  // The rows the specs could express are simulated, options.jobs at once (sim/simulate: each in its
  // own child process); results land at their row's index, so the output order does not depend on
  // which finishes first.
  std::vector<std::size_t> simulated;
  std::vector<SimulationCase> cases;
  for (std::size_t i = 0; i < dataset.cases.size(); ++i) {
    const ValidationCase& c = dataset.cases[i];
    if (!c.unsupported.empty()) {
      result.rows[i].measured = c.measured;
      result.rows[i].reason = c.unsupported;
      continue;
    }
    simulated.push_back(i);
    cases.push_back({&*c.cluster, &*c.workload});
  }
  const std::vector<SimulationOutcome> outcomes =
      simulate_all(cases, sim, static_cast<std::size_t>(std::max(1, options.jobs)));
  for (std::size_t k = 0; k < simulated.size(); ++k)
    result.rows[simulated[k]] = row_result(dataset, dataset.cases[simulated[k]], outcomes[k]);
  result.summary = summarize(result.rows);
  return result;
}

}  // namespace clustersim
