// clustersim serve --cluster C --serving S: inference serving, request by request (docs/serving.md).
#include <iostream>
#include <limits>
#include <stdexcept>

#include "sim/api/serving_layout_search.hpp"
#include "sim/api/serving_request.hpp"
#include "sim/api/simulation_request.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"

namespace clustersim::cli {
namespace {

double number_option(const std::string& option, const std::string& text, const char* expected) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw SpecError("--" + option, "", std::string("expected ") + expected + ", got \"" + text + "\"");
}

// A whole number, its range checked by whoever takes it (the request, or parse_sizes).
long long whole_number(const std::string& option, const std::string& text, const char* expected) {
  return whole_number_option("--" + option, text, std::numeric_limits<long long>::min(),
                             std::numeric_limits<long long>::max(), expected);
}

// "1,2,4,8" -> {1, 2, 4, 8}.
std::vector<int> parse_sizes(const std::string& option, const std::string& text) {
  std::vector<int> sizes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const long long v =
        whole_number(option, text.substr(start, comma - start), "a comma-separated list of sizes (e.g. 1,2,4,8)");
    if (v < 1 || v > 1 << 20) throw SpecError("--" + option, "", "expected sizes >= 1, got " + std::to_string(v));
    sizes.push_back(static_cast<int>(v));
    start = comma + 1;
  }
  return sizes;
}

int run_layout_search(const Arguments& a) {
  LayoutSearchRequest request;
  request.clusters = a.values("cluster");
  request.serving = a.required("serving");
  request.settings = a.values("set");
  if (const auto r = a.value("target-rate"))
    request.target_rate_rps = number_option("target-rate", *r, "a rate in requests/s > 0");
  if (const auto tp = a.value("tp")) request.tp = parse_sizes("tp", *tp);
  if (const auto pp = a.value("pp")) request.pp = parse_sizes("pp", *pp);
  const LayoutSearch search = search_layouts(request);
  const std::string json = layout_search_json(search, 2);
  if (const auto out = a.value("out")) write_output_file(*out, json + "\n", "report file");
  std::cout << (a.flag("json") ? json + "\n" : layout_search_text(search));
  return 0;
}

}  // namespace

int run_serve(const std::vector<std::string>& args) {
  const Arguments a(args,
                    {"cluster", "serving", "out", "timeline", "timeline-requests", "sample-interval", "set",
                     "target-rate", "tp", "pp"},
                    {"json", "find-max-rate", "search-layouts"});
  if (!a.positional().empty()) throw UsageError("unexpected argument '" + a.positional().front() + "'");
  if (a.flag("search-layouts")) {
    if (a.flag("find-max-rate")) throw UsageError("give --find-max-rate or --search-layouts, not both");
    for (const char* only_one : {"timeline", "timeline-requests", "sample-interval"})
      if (a.value(only_one))
        throw UsageError(std::string("--") + only_one + " is for one deployment, not --search-layouts");
    if (a.values("cluster").empty()) throw UsageError("give at least one --cluster");
    std::vector<std::string> inputs = a.values("cluster");
    inputs.push_back(a.required("serving"));
    if (const auto out = a.value("out")) check_output_paths({{*out, "report file"}}, inputs);
    return run_layout_search(a);
  }
  for (const char* search_only : {"target-rate", "tp", "pp"})
    if (a.value(search_only)) throw UsageError(std::string("--") + search_only + " goes with --search-layouts");
  if (a.values("cluster").size() > 1) throw UsageError("--cluster is given once (several go with --search-layouts)");
  std::vector<OutputPath> outputs;
  if (const auto out = a.value("out")) outputs.push_back({*out, "report file"});
  if (const auto timeline = a.value("timeline")) outputs.push_back({*timeline, "timeline file"});
  check_output_paths(outputs, {a.required("cluster"), a.required("serving")});
  ServingRequest request;
  request.cluster = a.required("cluster");
  request.serving = a.required("serving");
  request.settings = a.values("set");
  request.timeline_path = a.value("timeline");
  if (const auto n = a.value("timeline-requests"))
    request.timeline_requests = whole_number("timeline-requests", *n, "a number of requests >= 1");
  if (const auto s = a.value("sample-interval"))
    request.sample_interval_s = number_option("sample-interval", *s, "a number of seconds > 0");

  if (a.flag("find-max-rate")) {
    const MaxRateSearch search = find_max_rate(request);
    const std::string json = max_rate_search_json(search, 2);
    if (const auto out = a.value("out")) write_output_file(*out, json + "\n", "report file");
    std::cout << (a.flag("json") ? json + "\n" : max_rate_search_text(search));
    return 0;
  }
  const ServingReport report = serve(request);
  const std::string json = serving_report_json(report, 2);
  if (const auto out = a.value("out")) write_output_file(*out, json + "\n", "report file");
  if (a.flag("json"))
    std::cout << json << "\n";
  else
    std::cout << serving_report_text(report);
  return 0;
}

}  // namespace clustersim::cli
