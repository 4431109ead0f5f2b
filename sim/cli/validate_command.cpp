// clustersim validate: replays published measurements (validation datasets) and prints the error.
#include <iostream>
#include <limits>

#include <nlohmann/json.hpp>

#include "sim/api/serving_validation.hpp"
#include "sim/api/simulation_request.hpp"
#include "sim/api/validation_request.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"
#include "sim/validation/error_bars.hpp"
#include "sim/validation/validation_report.hpp"

namespace clustersim::cli {
namespace {

// --jobs / --limit as a number (the request checks its range).
std::optional<std::int64_t> integer_option(const std::optional<std::string>& text, const std::string& option) {
  if (!text) return std::nullopt;
  return whole_number_option("--" + option, *text, std::numeric_limits<long long>::min(),
                             std::numeric_limits<long long>::max(), "a positive integer");
}

// --coverage: how often the error bars of the shipped residuals contain the measurement, per dataset,
// leave-one-out (a row's own residual is never its neighbour) and leave-one-dataset-out.
int print_coverage(bool json) {
  const ResidualTable table = shipped_residuals();
  if (table.rows.empty()) throw SpecError("calibration/validation/residuals.json", "", "no residuals compiled in");
  const auto by_row = leave_one_out_coverage(table, false);
  const auto by_dataset = leave_one_out_coverage(table, true);
  if (json) {
    nlohmann::ordered_json j = {{"residuals", table.file},
                                {"generated_by", table.generated_by},
                                {"fidelity", table.fidelity},
                                {"datasets", nlohmann::ordered_json::array()}};
    for (std::size_t i = 0; i < by_row.size(); ++i)
      j["datasets"].push_back({{"dataset", by_row[i].dataset},
                               {"rows", by_row[i].rows},
                               {"coverage", by_row[i].coverage},
                               {"median_width", by_row[i].median_width},
                               {"median_distance", by_row[i].median_distance},
                               {"coverage_dataset_left_out", by_dataset[i].coverage},
                               {"median_width_dataset_left_out", by_dataset[i].median_width},
                               {"median_distance_dataset_left_out", by_dataset[i].median_distance}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  char line[256];
  std::cout << "# error bars: coverage of the measured step time (serving datasets: their metrics), per dataset ("
            << table.file << ", " << table.rows.size() << " rows, " << table.fidelity << " fidelity)\n"
            << "# leave one row out: the row's own residual is not among its neighbours; leave its dataset out: no row "
               "of its dataset is\n"
            << "# width = median (hi - lo) / predicted; distance = median of the neighbours' mean feature distance\n";
  std::snprintf(line, sizeof line, "# %-26s %5s | %9s %7s %8s | %9s %7s %8s\n", "dataset", "rows", "coverage", "width",
                "distance", "coverage", "width", "distance");
  std::cout << line;
  std::snprintf(line, sizeof line, "# %-26s %5s | %-26s | %-26s\n", "", "", "leave one row out",
                "leave its dataset out");
  std::cout << line;
  for (std::size_t i = 0; i < by_row.size(); ++i) {
    const auto& r = by_row[i];
    const auto& d = by_dataset[i];
    std::snprintf(line, sizeof line, "  %-26s %5zu | %8.1f%% %6.1f%% %8.2f | %8.1f%% %6.1f%% %8.2f\n",
                  r.dataset.c_str(), r.rows, 100 * r.coverage, 100 * r.median_width, r.median_distance,
                  100 * d.coverage, 100 * d.median_width, d.median_distance);
    std::cout << line;
  }
  return 0;
}

// Serving datasets (sim/api/serving_validation.hpp): each replayed through the serving engine.
int run_serving_validations(const Arguments& a) {
  for (const char* option : {"fidelity", "jobs", "residuals"})
    if (a.value(option))
      throw UsageError(std::string("--") + option +
                       " is for the training datasets; a serving dataset takes --limit, "
                       "--scheduler, --json and --out");
  std::vector<OutputPath> outputs;
  if (const auto out = a.value("out")) outputs.push_back({*out, "validation results file"});
  check_output_paths(outputs, a.positional());
  ServingValidationOptions options;
  if (const auto limit = a.value("limit"))
    options.limit = static_cast<std::size_t>(
        whole_number_option("--limit", *limit, 1, std::numeric_limits<long long>::max(), "a number of rows"));
  options.scheduler = a.value("scheduler");
  nlohmann::ordered_json all = {{"datasets", nlohmann::ordered_json::array()}};
  std::string text;
  for (const std::string& name : a.positional()) {
    const ServingValidation v = run_serving_validation(name, options);
    all["datasets"].push_back(nlohmann::ordered_json::parse(serving_validation_json(v, -1)));
    text += (text.empty() ? "" : "\n") + serving_validation_text(v);
  }
  const std::string json = all.dump(2);
  if (const auto out = a.value("out")) write_output_file(*out, json + "\n", "validation results file");
  std::cout << (a.flag("json") ? json + "\n" : text);
  return 0;
}

}  // namespace

int run_validate(const std::vector<std::string>& args) {
  const Arguments a(args, {"fidelity", "jobs", "limit", "out", "residuals", "scheduler"}, {"json", "coverage", "list"});
  if (a.flag("list")) {
    if (!a.positional().empty()) throw UsageError("--list lists the shipped datasets: name no dataset");
    for (const auto& n : validation_dataset_names())
      std::cout << n << "\ttraining\n";
    for (const auto& n : serving_validation_names())
      std::cout << n << "\tserving\n";
    return 0;
  }
  // Serving datasets named run on their own (they take --scheduler); `all` runs the training datasets,
  // then the serving ones with their mappings' schedulers.
  std::size_t serving = 0;
  for (const std::string& p : a.positional())
    serving += is_serving_validation(p) ? 1 : 0;
  if (serving > 0) {
    if (serving != a.positional().size())
      throw UsageError("serving datasets (" + [] {
        std::string names;
        for (const auto& n : serving_validation_names())
          names += (names.empty() ? "" : ", ") + n;
        return names;
      }() + ") run on their own or in all: name no training dataset beside them");
    return run_serving_validations(a);
  }
  if (a.value("scheduler")) throw UsageError("--scheduler is for the serving datasets");
  if (a.flag("coverage")) {
    if (!a.positional().empty()) throw UsageError("--coverage reads the shipped residuals: name no dataset");
    return print_coverage(a.flag("json"));
  }
  if (a.positional().empty()) throw UsageError("name a dataset (or all)");
  std::vector<std::string> datasets, serving_datasets;
  for (const std::string& p : a.positional()) {
    if (p == "all") {
      for (const auto& n : validation_dataset_names())
        datasets.push_back(n);
      for (const auto& n : serving_validation_names())
        serving_datasets.push_back(n);
    } else {
      datasets.push_back(p);
    }
  }
  std::vector<OutputPath> outputs;
  if (const auto out = a.value("out")) outputs.push_back({*out, "validation results file"});
  if (const auto out = a.value("residuals")) outputs.push_back({*out, "residual file"});
  check_output_paths(outputs, a.positional());
  const ValidationRequest request{a.value("fidelity"), integer_option(a.value("jobs"), "jobs"),
                                  integer_option(a.value("limit"), "limit")};
  const ValidationOptions options = validation_options(request);
  const std::size_t limit = validation_row_limit(request);

  // Every description and data file is read (and every malformed row refused) before any simulation.
  std::vector<ValidationDataset> loaded;
  for (const auto& name : datasets)
    loaded.push_back(load_validation_dataset(name, limit));

  nlohmann::ordered_json all = {{"fidelity", options.fidelity}, {"datasets", nlohmann::ordered_json::array()}};
  ResidualTable residuals;
  residuals.fidelity = options.fidelity;
  residuals.generated_by = "clustersim validate";
  for (const std::string& arg : args)
    residuals.generated_by += " " + arg;
  for (std::size_t i = 0; i < loaded.size(); ++i) {
    const ValidationResult result = run_validation(loaded[i], options);
    for (std::size_t k = 0; k < result.rows.size(); ++k)
      if (result.rows[k].status == RowStatus::simulated)
        residuals.rows.push_back({loaded[i].name, loaded[i].cases[k].id, loaded[i].stack, result.rows[k].features,
                                  result.rows[k].step_time_error});
    all["datasets"].push_back(nlohmann::ordered_json::parse(validation_to_json(loaded[i], result, options, -1)));
    if (!a.flag("json"))
      std::cout << (i > 0 ? "\n" : "") << validation_to_text(loaded[i], result, options) << std::flush;
  }
  // The serving datasets: their rows, and their residuals (metric named) after the training rows.
  ServingValidationOptions serving_options;
  serving_options.limit = limit;
  for (const std::string& name : serving_datasets) {
    const ServingValidation v = run_serving_validation(name, serving_options);
    for (ResidualRow& row : serving_residual_rows(v))
      residuals.rows.push_back(std::move(row));
    all["datasets"].push_back(nlohmann::ordered_json::parse(serving_validation_json(v, -1)));
    if (!a.flag("json")) std::cout << "\n" << serving_validation_text(v) << std::flush;
  }
  const std::string json = all.dump(2);
  if (const auto out = a.value("out")) write_output_file(*out, json + "\n", "validation results file");
  if (const auto out = a.value("residuals")) write_output_file(*out, residuals_to_json(residuals), "residual file");
  if (a.flag("json")) std::cout << json << "\n";
  return 0;
}

}  // namespace clustersim::cli
