#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "sim/api/network_calibration.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/collective_sweep.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"

namespace clustersim::cli {
namespace {

void print_errors(const std::vector<TableError>& errors) {
  std::printf("  %-22s %-9s %-17s %5s %10s %10s %10s\n", "table", "role", "algorithm", "rows", "median", "p90", "max");
  for (const auto& e : errors) {
    std::printf("  %-22s %-9s %-17s %5d %9.1f%% %9.1f%% %9.1f%%\n", e.id.c_str(), e.role.c_str(), e.algorithm.c_str(),
                e.rows, 100 * e.median_abs_error, 100 * e.p90_abs_error, 100 * e.max_abs_error);
  }
  // Per system (the machine a table was measured on): its rows pooled, by role.
  std::vector<std::pair<std::string, std::string>> systems;  // (system, role), in order of appearance
  for (const auto& e : errors)
    if (std::find(systems.begin(), systems.end(), std::make_pair(e.system, e.role)) == systems.end())
      systems.emplace_back(e.system, e.role);
  std::printf("  per system                role      tables   rows   pooled median   pooled p90\n");
  for (const auto& [system, role] : systems) {
    std::vector<TableError> of_system;
    for (const auto& e : errors)
      if (e.system == system && e.role == role) of_system.push_back(e);
    const TableErrorSummary s = summarize_errors(of_system, role);
    std::printf("  %-25s %-9s %6d %6d %14.1f%% %11.1f%%\n", system.c_str(), role.c_str(), s.tables, s.rows,
                100 * s.pooled_median_abs_error, 100 * s.pooled_p90_abs_error);
  }
  std::printf("  together                  tables   rows  median of table medians   pooled median   pooled p90\n");
  for (const char* role : {"fit", "validate", ""}) {
    const TableErrorSummary s = summarize_errors(errors, role);
    if (s.tables == 0) continue;
    std::printf("  %-24s %7d %6d %24.1f%% %14.1f%% %11.1f%%\n", *role != '\0' ? role : "all", s.tables, s.rows,
                100 * s.median_of_table_medians, 100 * s.pooled_median_abs_error, 100 * s.pooled_p90_abs_error);
  }
}

}  // namespace

int run_calibrate_network(const std::vector<std::string>& args) {
  const Arguments a(args, {"datasets", "data-dir", "out-dir", "min-bytes", "fidelity", "profile"}, {"check"});
  if (!a.positional().empty()) throw UsageError("unexpected argument '" + a.positional().front() + "'");
  const std::string datasets = a.value("datasets").value_or("calibration/network/datasets.json");
  const std::string data_dir = a.value("data-dir").value_or("calibration/data");
  const double min_bytes = parse_byte_size(a.value("min-bytes").value_or("1048576"), "--min-bytes");
  const NetworkDatasets data = load_network_datasets(datasets, data_dir);
  const std::optional<std::string> only = a.value("profile");
  if (only) {
    std::string known;
    bool found = false;
    for (const NetworkProfile& p : data.profiles) {
      found = found || p.name == *only;
      known += (known.empty() ? "" : ", ") + p.name;
    }
    if (!found) throw SpecError("--profile " + *only, "", "expected a profile of " + datasets + ": " + known);
  }
  if (const auto dir = a.value("out-dir")) {
    std::vector<OutputPath> outputs;
    for (const NetworkProfile& p : data.profiles)
      if (!only || p.name == *only) outputs.push_back({*dir + "/" + p.name + ".json", "profile"});
    check_output_paths(outputs, {datasets});
  }
  if (a.value("fidelity") && !a.flag("check"))
    throw UsageError("--fidelity applies to --check (the fit itself runs the analytical backend)");
  for (const NetworkProfile& base : data.profiles) {
    if (only && base.name != *only) continue;
    std::vector<CollectiveTable> tables;
    double largest_bytes = 0.0;
    for (const auto& t : data.tables) {
      if (t.profile != base.name) continue;
      tables.push_back(t);
      for (const double b : t.bytes)
        largest_bytes = std::max(largest_bytes, b);
    }
    // A fit (or a check) on no row would print a profile "fitted" with residual 0.
    if (largest_bytes < min_bytes)
      throw SpecError("--min-bytes " + a.value("min-bytes").value_or("1048576"), "",
                      "no row of profile " + base.name + "'s tables in " + datasets + " has that many bytes (the " +
                          "largest has " + std::to_string(static_cast<long long>(largest_bytes)) +
                          "): nothing to fit or check");
    if (a.flag("check")) {
      // Evaluate the shipped profile with the chosen fidelity (flow: SimGrid, one child per table).
      const NetworkProfile profile = load_network_profile(base.name);
      const std::string fidelity = a.value("fidelity").value_or("flow");
      std::printf("\nprofile %s: bus bandwidth error per table (sizes >= %.0f B, %s backend)\n", profile.name.c_str(),
                  min_bytes, fidelity.c_str());
      print_errors(evaluate_network_profile(tables, profile, fidelity, min_bytes));
      continue;
    }
    const NetworkCalibration c = calibrate_network(tables, base, min_bytes);
    const std::string json = network_profile_to_json(c.profile);
    if (const auto dir = a.value("out-dir")) {
      const std::string path = *dir + "/" + base.name + ".json";
      write_output_file(path, json + "\n", "profile");
      std::printf("wrote %s\n", path.c_str());
    } else {
      std::printf("%s\n", json.c_str());
    }
    std::printf("\nprofile %s: bus bandwidth error per table (analytical backend; 'validate' tables not fitted)\n",
                base.name.c_str());
    print_errors(c.errors);
  }
  return 0;
}

}  // namespace clustersim::cli
