#pragma once
// Fitting the network profile to nccl-tests measurements, and measuring its error on held-out ones.
//
// The tables (sim/network/collective_tables.hpp) come from a dataset file. The fit simulates the fit
// tables with the analytical backend (equal to the flow backend on an idle fabric, which is what
// nccl-tests measures) and adjusts a few physical parameters to minimize the squared log error:
//   - NVLink bandwidth efficiency and per-step latency, and the per-call latency (single-node rings);
//   - the NVLS efficiency (in-switch reduction tables);
//   - the efficiency of each scale-out technology that has a table (InfiniBand, Ethernet).
// Validation simulates the held-out tables with the fitted profile and reports the bus-bandwidth error.
// It runs the collective sweep (sim/collective_sweep.hpp), hence the application layer.
#include <string>
#include <vector>

#include "sim/network/collective_tables.hpp"
#include "sim/network/network_profile.hpp"

namespace clustersim {

struct TableError {
  std::string id;
  std::string role;
  std::string algorithm;          // what the simulator ran
  int rows = 0;                   // rows compared (sizes >= min_bytes)
  double median_abs_error = 0.0;  // of bus bandwidth, relative
  double p90_abs_error = 0.0;
  double max_abs_error = 0.0;
  std::vector<double> abs_errors;  // every row compared, ascending
  std::string system;              // the machine measured (CollectiveTable::system)
};

// The tables of one role ("fit", "validate"; empty: all) taken together: the median of their
// medians, and the median and p90 of all their rows pooled (large tables weigh more there).
// (Not validation's ErrorSummary: two classes of one name in one namespace broke the one-definition rule.)
struct TableErrorSummary {
  int tables = 0;
  int rows = 0;
  double median_of_table_medians = 0.0;
  double pooled_median_abs_error = 0.0;
  double pooled_p90_abs_error = 0.0;
};
TableErrorSummary summarize_errors(const std::vector<TableError>& errors, const std::string& role = "");

struct NetworkCalibration {
  NetworkProfile profile;
  std::vector<TableError> errors;  // every table, fit and validate
};

// Fits `base` (name, description, gpus kept) on the `fit` tables and evaluates it on all `tables`
// (rows of at least `min_bytes`; nccl-tests' small sizes are dominated by launch jitter).
NetworkCalibration calibrate_network(const std::vector<CollectiveTable>& tables, const NetworkProfile& base,
                                     double min_bytes = 1024.0 * 1024.0);
// Bus-bandwidth errors of `profile` on `tables` (simulated with `fidelity`; flow runs in a child).
std::vector<TableError> evaluate_network_profile(const std::vector<CollectiveTable>& tables,
                                                 const NetworkProfile& profile, const std::string& fidelity,
                                                 double min_bytes = 1024.0 * 1024.0);

}  // namespace clustersim
