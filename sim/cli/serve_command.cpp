// clustersim serve --cluster C --serving S: inference serving, request by request (docs/serving.md).
#include <iostream>
#include <stdexcept>

#include "sim/api/serving_request.hpp"
#include "sim/cli/arguments.hpp"
#include "sim/cli/command.hpp"
#include "sim/core/error.hpp"
#include "sim/core/output_file.hpp"

namespace clustersim::cli {
namespace {

template <typename T>
T parse_option(const std::string& option, const std::string& text, const char* expected) {
  try {
    std::size_t used = 0;
    T v{};
    if constexpr (std::is_same_v<T, double>)
      v = std::stod(text, &used);
    else
      v = std::stoll(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw SpecError("--" + option, "", std::string("expected ") + expected + ", got \"" + text + "\"");
}

}  // namespace

int run_serve(const std::vector<std::string>& args) {
  const Arguments a(args, {"cluster", "serving", "out", "timeline", "timeline-requests", "sample-interval", "set"},
                    {"json", "find-max-rate"});
  if (!a.positional().empty()) throw UsageError("unexpected argument '" + a.positional().front() + "'");
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
    request.timeline_requests = parse_option<long long>("timeline-requests", *n, "a number of requests >= 1");
  if (const auto s = a.value("sample-interval"))
    request.sample_interval_s = parse_option<double>("sample-interval", *s, "a number of seconds > 0");

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
