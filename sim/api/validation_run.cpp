#include "sim/api/validation_run.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "sim/core/error.hpp"
#include "sim/network/network_backend.hpp"
#include "sim/simulate.hpp"

namespace clustersim {
namespace {

RowResult replay_case(const ValidationDataset& d, const ValidationCase& c, const SimulationOptions& options) {
  RowResult r;
  r.measured = c.measured;
  if (!c.unsupported.empty()) {
    r.reason = c.unsupported;
    return r;
  }
  try {
    const Report report = simulate(*c.cluster, *c.workload, options);
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
  // A small pool of threads, each waiting on one simulation child at a time; results land at their
  // row's index, so the output order does not depend on which finishes first.
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < dataset.cases.size(); i = next++)
      result.rows[i] = replay_case(dataset, dataset.cases[i], sim);
  };
  const auto jobs = static_cast<std::size_t>(std::max(1, options.jobs));
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < std::min(jobs, dataset.cases.size()); ++k)
    pool.emplace_back(worker);
  worker();
  for (auto& t : pool)
    t.join();
  result.summary = summarize(result.rows);
  return result;
}

}  // namespace clustersim
