#pragma once
// The result of replaying a validation dataset (sim/api/validation_run.hpp runs it): each row's
// error against the measurement, and the summary.
//
// A row ends in one of three states:
//   simulated    predicted and error are set; counted in the statistics
//   unsupported  the simulator (or the spec layer) refuses the configuration: reason says why. Not
//                counted in the statistics, counted in the summary; these shrink as features land.
//   failed       the simulation could not finish (SimulationError): reason says why. Not counted.
#include <cstddef>
#include <string>
#include <vector>

#include "sim/validation/error_summary.hpp"
#include "sim/validation/prediction_features.hpp"
#include "sim/validation/validation_dataset.hpp"

namespace clustersim {

enum class RowStatus { simulated, unsupported, failed };
const char* to_string(RowStatus s);

struct RowResult {
  RowStatus status = RowStatus::unsupported;
  double measured = 0.0;         // in the dataset's metric
  double predicted = 0.0;        // in the dataset's metric
  double error = 0.0;            // (predicted - measured) / measured
  double step_time_error = 0.0;  // (predicted - measured) / measured of the step time (validation_metric.hpp)
  PredictionFeatures features;   // of the simulated run (the residuals of the error bars)
  double step_time_s = 0.0;
  bool fits = true;  // the simulator's memory model says the configuration fits the GPU
  // With a measured peak memory (ValidationCase::measured_peak_bytes > 0) and a simulated row: the
  // report's line that counts the same bytes, and its error.
  bool has_peak_memory = false;
  double predicted_peak_bytes = 0.0;
  double peak_memory_error = 0.0;
  std::string reason;
};

struct ValidationSummary {
  std::size_t rows = 0;  // rows replayed (after --limit)
  std::size_t simulated = 0;
  std::size_t unsupported = 0;
  std::size_t failed = 0;
  std::size_t not_fitting = 0;      // simulated rows the memory model says do not fit
  ErrorSummary errors;              // over the simulated rows
  ErrorSummary peak_memory_errors;  // over the simulated rows with a measured peak memory
};

struct ValidationOptions {
  std::string fidelity = "flow";
  int jobs = 2;  // simulations running at once (each in its own child process)
};

struct ValidationResult {
  std::vector<RowResult> rows;  // in the order of dataset.cases
  ValidationSummary summary;
};

// The summary of a list of row results (exposed for tests).
ValidationSummary summarize(const std::vector<RowResult>& rows);

}  // namespace clustersim
