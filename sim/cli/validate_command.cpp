// clustersim validate: replays published measurements (validation datasets) and prints the error.
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/validation/validation_report.hpp"

namespace clustersim::cli {
namespace {

int positive_integer(const std::optional<std::string>& text, const std::string& option, int fallback) {
  if (!text) return fallback;
  try {
    std::size_t used = 0;
    const int v = std::stoi(*text, &used);
    if (used == text->size() && v > 0) return v;
  } catch (const std::logic_error&) {
  }
  throw UsageError("option --" + option + " expects a positive integer, got '" + *text + "'");
}

}  // namespace

int run_validate(const std::vector<std::string>& args) {
  const Arguments a(args, {"fidelity", "jobs", "limit", "out"}, {"json"});
  if (a.positional().empty()) throw UsageError("name a dataset (or all)");
  std::vector<std::string> datasets;
  for (const std::string& p : a.positional()) {
    if (p == "all") {
      for (const auto& n : validation_dataset_names())
        datasets.push_back(n);
    } else {
      datasets.push_back(p);
    }
  }
  ValidationOptions options;
  options.fidelity = a.value("fidelity").value_or(options.fidelity);
  options.jobs = positive_integer(a.value("jobs"), "jobs", options.jobs);
  const auto limit = static_cast<std::size_t>(a.value("limit") ? positive_integer(a.value("limit"), "limit", 1) : 0);

  // Every description and data file is read (and every malformed row refused) before any simulation.
  std::vector<ValidationDataset> loaded;
  for (const auto& name : datasets)
    loaded.push_back(load_validation_dataset(name, limit));

  nlohmann::ordered_json all = {{"fidelity", options.fidelity}, {"datasets", nlohmann::ordered_json::array()}};
  for (std::size_t i = 0; i < loaded.size(); ++i) {
    const ValidationResult result = run_validation(loaded[i], options);
    all["datasets"].push_back(nlohmann::ordered_json::parse(validation_to_json(loaded[i], result, options, -1)));
    if (!a.flag("json"))
      std::cout << (i > 0 ? "\n" : "") << validation_to_text(loaded[i], result, options) << std::flush;
  }
  const std::string json = all.dump(2);
  if (const auto out = a.value("out")) {
    std::ofstream f(*out, std::ios::binary);
    if (!f) throw SpecError(*out, "", "cannot write the validation results file");
    f << json << "\n";
  }
  if (a.flag("json")) std::cout << json << "\n";
  return 0;
}

}  // namespace clustersim::cli
