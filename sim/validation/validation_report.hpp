#pragma once
// The output of `clustersim validate`: a readable table (header with everything the mapping assumes,
// one line per row, the summary) and the machine form (JSON).
#include <string>

#include "sim/validation/validation_result.hpp"

namespace clustersim {

std::string validation_to_text(const ValidationDataset& dataset, const ValidationResult& result,
                               const ValidationOptions& options);
// One dataset as a JSON object (stable keys: dataset, metric, unit, rows[id, config, gpus, status,
// measured, predicted, error, step_time_s, fits, reason], summary{rows, simulated, unsupported, failed,
// not_fitting, mape, median_abs_error, p90_abs_error, max_abs_error, bias}); `indent` < 0: one line.
std::string validation_to_json(const ValidationDataset& dataset, const ValidationResult& result,
                               const ValidationOptions& options, int indent = 2);

}  // namespace clustersim
