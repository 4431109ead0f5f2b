#pragma once
// Error bars: the interval a measured step time is expected in, given a prediction, derived from the
// validation residuals of the runs closest to it (error_bars.cpp has the rule and its equations).
//
// The residuals ship with the product: calibration/validation/residuals.json, written by
// `clustersim validate all --fidelity analytical --residuals calibration/validation/residuals.json`
// (one row per simulated validation row: dataset, id, stack, features, step-time error).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/report/report.hpp"
#include "sim/validation/prediction_features.hpp"

namespace clustersim {

inline constexpr std::string_view kStepTimeMetric = "step_time_s";

struct ResidualRow {
  std::string dataset;
  std::string id;
  std::string stack;  // the dataset's training software ("" when it does not say)
  PredictionFeatures features;
  double step_time_error = 0.0;  // (predicted - measured) / measured of `metric` (the step time for training)
  // What was compared: "step_time_s" (training rows; the file omits it) or a serving metric
  // ("output_tokens_per_s", "ttft_s", "itl_s"; the file names it and the error is under "error").
  std::string metric = std::string(kStepTimeMetric);
};

struct ResidualTable {
  std::string file;          // where it was read from
  std::string generated_by;  // the command that wrote it
  std::string fidelity;      // of the simulations behind it
  std::vector<ResidualRow> rows;
};

// Reads a residual file; SpecError(file, JSON path) when malformed.
ResidualTable parse_residuals(std::string_view json_text, const std::string& file);
std::string residuals_to_json(const ResidualTable& table);
// The residuals compiled into the library (calibration/validation/residuals.json).
ResidualTable shipped_residuals();

// The distance between two runs' features (error_bars.cpp: weights per feature).
double feature_distance(const PredictionFeatures& a, const PredictionFeatures& b);

// What to leave out of the neighbours (leave-one-out coverage).
struct ResidualExclusion {
  const ResidualRow* row = nullptr;  // this row
  std::string dataset;               // every row of this dataset ("" none)
};

// The interval of the measured value of `metric` for a prediction `predicted` with `features`, from the
// table's rows of the same metric (lo / hi in the metric's unit); nullopt when the table has no
// row of that metric to compare with.
std::optional<StepTimeInterval> metric_interval(const PredictionFeatures& features, std::string_view metric,
                                                double predicted, const ResidualTable& table,
                                                const ResidualExclusion& exclude = {});
// metric_interval of the step time.
std::optional<StepTimeInterval> step_time_interval(const PredictionFeatures& features, double step_time_s,
                                                   const ResidualTable& table, const ResidualExclusion& exclude = {});

// Leave-one-out coverage per dataset: for each row, the interval from the other rows (or, with
// `leave_dataset_out`, from the other datasets' rows) around a prediction, and whether the measured
// value falls in it (each row against the rows of its own metric).
struct IntervalCoverage {
  std::string dataset;
  std::size_t rows = 0;
  std::size_t covered = 0;
  double coverage = 0.0;         // covered / rows
  double median_width = 0.0;     // median of (hi - lo) / predicted
  double median_distance = 0.0;  // median of the neighbours' mean distance
};
std::vector<IntervalCoverage> leave_one_out_coverage(const ResidualTable& table, bool leave_dataset_out = false);

}  // namespace clustersim
