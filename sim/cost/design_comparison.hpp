#pragma once
// Cluster designs side by side (clustersim compare; the Python API later): per design the step
// time, throughput, MFU, memory fit, power, energy per token, capital cost, $ per million tokens and
// the time, energy and cost to train a number of tokens, and which designs are Pareto-optimal on
// (time to train, cost to train): no other design is at least as fast and as cheap and better in one.
// Designs whose model does not fit in GPU memory cannot train: the Pareto front is taken among the
// designs that fit, or among all when none does (the comparison says which). When every design's
// report carries its time to train (failures, checkpoints, restarts: sim/training_run), the front and
// the ranking use that run's mean wall time and cost, goodput included, not the failure-free step.
// Error bars: each design's training time carries the interval of its step time (the report's
// step_time_interval_s, from the validation residuals of the nearest runs); two designs whose
// intervals overlap are "within the model's error" of each other: the simulator cannot say which
// one is faster. (Conservative: the errors of two similar designs are correlated, so their
// difference is usually known better than either.)
#include <optional>
#include <string>
#include <vector>

#include "sim/report/report.hpp"

namespace clustersim {

struct DesignRow {
  std::string design;  // the cluster's name, or what the user typed
  std::optional<Report> report;
  std::string error;  // the simulation failed: why (report is empty)
  double train_time_s = 0.0;
  double train_cost_usd = 0.0;
  double train_energy_kwh = 0.0;
  std::optional<double> train_time_lo_s;  // the step-time interval scaled to the run; none without one
  std::optional<double> train_time_hi_s;
  std::vector<std::string> within_error_of;  // designs whose training-time intervals overlap this one's
  // With failures, checkpoints and restarts (the report's time_to_train section, when the design's
  // simulation was asked for the tokens): the run's mean wall time and cost, which rank the designs.
  std::optional<double> run_time_s;
  std::optional<double> run_cost_usd;
  bool pareto = false;
};

struct DesignComparison {
  std::string workload;
  double tokens = 0.0;  // the training run's length, in tokens
  std::vector<DesignRow> rows;
  std::string pareto_among;  // "designs that fit in memory" or "all designs (none fits in memory)"
};

// Repeated design names told apart, for every comparison and front end: the second "x" becomes "x #2",
// the third "x #3"; the others are unchanged.
void number_repeated_designs(std::vector<std::string*> names);

// Fills the training-run figures and the Pareto marks of `rows` (reports in, in order).
// Repeated design names are told apart here, for every front end: the second "x" becomes "x #2", the
// third "x #3".
DesignComparison compare_designs(std::string workload, double tokens, std::vector<DesignRow> rows);

// What ranks a design (the Pareto front, the charts): its run with failures when the comparison has
// them for every design, else its failure-free training.
double ranked_time_s(const DesignRow& r);
double ranked_cost_usd(const DesignRow& r);

std::string comparison_to_text(const DesignComparison& c);
// {"workload", "tokens", "pareto_among", "designs": [{"design", "pareto", "train_time_s", ...,
// "report": {...}} | {"design", "error"}]}
std::string comparison_to_json(const DesignComparison& c, int indent = 2);

}  // namespace clustersim
