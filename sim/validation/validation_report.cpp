#include "sim/validation/validation_report.hpp"

#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

namespace clustersim {
namespace {

std::string format(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string percent(double fraction) {
  return format("%.1f%%", fraction * 100.0);
}

// The first line of a reason (simulation errors can list every waiting rank on further lines).
std::string first_line(const std::string& reason) {
  return reason.substr(0, reason.find('\n'));
}

// What rows with this reason have in common, for the summary's tally: the first line up to a ';' or
// a '(' (which start row-specific details: sizes, rank lists).
std::string reason_kind(const std::string& reason) {
  std::string kind = first_line(reason);
  kind = kind.substr(0, kind.find_first_of(";("));
  while (!kind.empty() && kind.back() == ' ')
    kind.pop_back();
  return kind;
}

// The error statistics' keys, in the report's order (after "rows" in errors_json and summary_json).
void add_error_statistics(nlohmann::ordered_json& j, const ErrorSummary& e) {
  j["mape"] = e.mape;
  j["median_abs_error"] = e.median_abs;
  j["p90_abs_error"] = e.p90_abs;
  j["max_abs_error"] = e.max_abs;
  j["bias"] = e.bias;
}

nlohmann::ordered_json errors_json(const ErrorSummary& e) {
  nlohmann::ordered_json j = {{"rows", e.count}};
  add_error_statistics(j, e);
  return j;
}

std::string errors_text(const ErrorSummary& e) {
  return "MAPE " + percent(e.mape) + ", median |error| " + percent(e.median_abs) + ", p90 |error| " +
         percent(e.p90_abs) + ", max |error| " + percent(e.max_abs) + ", bias (mean error) " + percent(e.bias);
}

nlohmann::ordered_json summary_json(const ValidationSummary& s) {
  nlohmann::ordered_json j = {{"rows", s.rows},
                              {"simulated", s.simulated},
                              {"unsupported", s.unsupported},
                              {"failed", s.failed},
                              {"not_fitting", s.not_fitting}};
  add_error_statistics(j, s.errors);
  j["peak_memory"] =
      s.peak_memory_errors.count > 0 ? errors_json(s.peak_memory_errors) : nlohmann::ordered_json(nullptr);
  return j;
}

}  // namespace

std::string validation_to_text(const ValidationDataset& d, const ValidationResult& result,
                               const ValidationOptions& options) {
  std::string out;
  out += "# clustersim validate " + d.name + (d.title.empty() ? "" : ": " + d.title) + "\n";
  out += "# source: " + d.source + "\n";
  if (!d.license.empty()) out += "# license: " + d.license + "\n";
  out += "# data: " + d.data_file + format(" (%zu rows", d.total_rows) +
         (d.cases.size() < d.total_rows ? format("; the first %zu replayed)", d.cases.size()) : std::string(")")) +
         "\n";
  out += "# metric: " + std::string(d.metric->summary) + "; error = (predicted - measured) / measured\n";
  if (d.peak_memory != nullptr)
    out += "# peak memory per GPU: " + std::string(d.peak_memory->summary) + ", in " + d.peak_memory_unit->name +
           "; error = (predicted - measured) / measured\n";
  if (d.flops != nullptr) out += "# flops per step: " + std::string(d.flops->name) + ": " + d.flops->summary + "\n";
  out += "# fidelity: " + options.fidelity + "\n";
  out += "# cluster: " + d.cluster + "\n";
  out += "# workload template: " + d.workload_template + "\n";
  out += "# mapping:\n";
  for (const auto& m : d.mapping)
    out += "#   " + m + "\n";
  if (!d.assumptions.empty()) out += "# assumptions:\n";
  for (const auto& a : d.assumptions)
    out += "#   - " + a + "\n";
  out += "#\n";
  const std::string unit = d.metric->unit;
  const bool peak = d.peak_memory != nullptr;
  const std::string peak_unit = peak ? "(" + std::string(d.peak_memory_unit->name) + ")" : "";
  out += format("# %-9s %-52s %6s %11s %11s %8s", "id", "configuration", "GPUs", "measured", "predicted", "error") +
         (peak ? format(" %11s %11s %8s", "peak meas.", "peak pred.", "error") : std::string()) + "\n";
  out +=
      format("# %-9s %-52s %6s %11s %11s %8s", "", "", "", ("(" + unit + ")").c_str(), ("(" + unit + ")").c_str(), "") +
      (peak ? format(" %11s %11s %8s", peak_unit.c_str(), peak_unit.c_str(), "") : std::string()) + "\n";
  std::map<std::string, std::size_t> reasons;
  for (std::size_t i = 0; i < d.cases.size(); ++i) {
    const ValidationCase& c = d.cases[i];
    const RowResult& r = result.rows[i];
    std::string line = format("  %-9s %-52s %6d %11.2f ", c.id.c_str(), c.label.c_str(), c.gpus, c.measured);
    if (r.status == RowStatus::simulated) {
      line += format("%11.2f %8s", r.predicted, percent(r.error).c_str());
      if (r.has_peak_memory)
        line += format(" %11.2f %11.2f %8s", c.measured_peak_bytes / d.peak_memory_unit->bytes,
                       r.predicted_peak_bytes / d.peak_memory_unit->bytes, percent(r.peak_memory_error).c_str());
      if (!r.fits) line += "  (memory model: does not fit)";
    } else {
      line += format("%11s %8s  %s: ", "-", "-", to_string(r.status)) + first_line(r.reason);
      ++reasons[std::string(to_string(r.status)) + ": " + reason_kind(r.reason)];
    }
    out += line + "\n";
  }
  const ValidationSummary& s = result.summary;
  out += "#\n";
  out += format("# summary %s: %zu rows: %zu simulated, %zu unsupported, %zu failed", d.name.c_str(), s.rows,
                s.simulated, s.unsupported, s.failed);
  if (s.not_fitting > 0) out += format(" (%zu simulated rows do not fit in memory by the model)", s.not_fitting);
  out += "\n";
  if (s.simulated > 0) {
    out += "#   error over the " + std::to_string(s.simulated) + " simulated rows: " + errors_text(s.errors) + "\n";
    if (s.peak_memory_errors.count > 0)
      out += "#   peak memory error over the " + std::to_string(s.peak_memory_errors.count) +
             " simulated rows that measured it: " + errors_text(s.peak_memory_errors) + "\n";
  } else {
    out += "#   no row simulated: no error statistics\n";
  }
  for (const auto& [reason, count] : reasons)
    out += format("#   %zu x ", count) + reason + "\n";
  if (!reasons.empty()) out += "#   (the JSON output, --json, has every reason in full)\n";
  return out;
}

std::string validation_to_json(const ValidationDataset& d, const ValidationResult& result,
                               const ValidationOptions& options, int indent) {
  nlohmann::ordered_json j;
  j["dataset"] = d.name;
  j["title"] = d.title;
  j["source"] = d.source;
  j["license"] = d.license;
  j["stack"] = d.stack;
  j["data_file"] = d.data_file;
  j["metric"] = d.metric->name;
  j["unit"] = d.metric->unit;
  j["flops"] = d.flops != nullptr ? nlohmann::ordered_json(d.flops->name) : nlohmann::ordered_json(nullptr);
  j["peak_memory"] = d.peak_memory != nullptr
                         ? nlohmann::ordered_json{{"counts", d.peak_memory->name}, {"unit", d.peak_memory_unit->name}}
                         : nlohmann::ordered_json(nullptr);
  j["fidelity"] = options.fidelity;
  j["cluster"] = d.cluster;
  j["workload_template"] = nlohmann::ordered_json::parse(d.workload_template);
  j["mapping"] = d.mapping;
  j["assumptions"] = d.assumptions;
  j["total_rows"] = d.total_rows;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < d.cases.size(); ++i) {
    const ValidationCase& c = d.cases[i];
    const RowResult& r = result.rows[i];
    const bool simulated = r.status == RowStatus::simulated;
    nlohmann::ordered_json row;
    row["id"] = c.id;
    row["config"] = c.label;
    row["gpus"] = c.gpus;
    row["status"] = to_string(r.status);
    row["measured"] = c.measured;
    row["predicted"] = simulated ? nlohmann::ordered_json(r.predicted) : nlohmann::ordered_json(nullptr);
    row["error"] = simulated ? nlohmann::ordered_json(r.error) : nlohmann::ordered_json(nullptr);
    row["step_time_s"] = simulated ? nlohmann::ordered_json(r.step_time_s) : nlohmann::ordered_json(nullptr);
    row["step_time_error"] = simulated ? nlohmann::ordered_json(r.step_time_error) : nlohmann::ordered_json(nullptr);
    row["features"] = simulated ? nlohmann::ordered_json{{"gpu", r.features.gpu},
                                                         {"generation", r.features.generation},
                                                         {"precision", r.features.precision},
                                                         {"sharding", r.features.sharding},
                                                         {"gpus", r.features.gpus}}
                                : nlohmann::ordered_json(nullptr);
    row["fits"] = simulated ? nlohmann::ordered_json(r.fits) : nlohmann::ordered_json(nullptr);
    row["reason"] = r.reason;
    const bool peak = simulated && r.has_peak_memory;
    row["measured_peak_memory_bytes"] =
        c.measured_peak_bytes > 0 ? nlohmann::ordered_json(c.measured_peak_bytes) : nlohmann::ordered_json(nullptr);
    row["predicted_peak_memory_bytes"] =
        peak ? nlohmann::ordered_json(r.predicted_peak_bytes) : nlohmann::ordered_json(nullptr);
    row["peak_memory_error"] = peak ? nlohmann::ordered_json(r.peak_memory_error) : nlohmann::ordered_json(nullptr);
    rows.push_back(std::move(row));
  }
  j["rows"] = std::move(rows);
  j["summary"] = summary_json(result.summary);
  return j.dump(indent);
}

}  // namespace clustersim
