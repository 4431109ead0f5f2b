#include "sim/api/simulation_request.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <thread>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

constexpr double kMaxTokens = 1e18;
// More children at once than this only queues them behind the cores (and each holds its own topology).
constexpr long long kMaxJobs = 1024;

}  // namespace

void add_algorithm(SimulationRequest& request, std::string_view value) {
  const auto eq = value.find('=');
  if (eq == std::string_view::npos)
    request.algorithm = std::string(value);
  else
    request.algorithm_by_group[std::string(value.substr(0, eq))] = std::string(value.substr(eq + 1));
}

std::optional<double> parse_si_quantity(std::string_view text) {
  std::string s(text);
  double scale = 1.0;
  if (!s.empty()) {
    switch (std::toupper(static_cast<unsigned char>(s.back()))) {
      case 'K':
        scale = 1e3;
        break;
      case 'M':
        scale = 1e6;
        break;
      case 'B':
      case 'G':
        scale = 1e9;
        break;
      case 'T':
        scale = 1e12;
        break;
      default:
        scale = 0.0;  // no suffix
    }
    if (scale != 0.0)
      s.pop_back();
    else
      scale = 1.0;
  }
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != s.size() || !std::isfinite(value) || !(value > 0.0)) return std::nullopt;
  return value * scale;  // may overflow to infinity ("1e308T"): callers bound it
}

double parse_token_count(std::string_view text, std::string_view option) {
  const std::optional<double> tokens = parse_si_quantity(text);
  if (!tokens)
    throw SpecError(std::string(option), "",
                    "expected a number of tokens > 0, optionally with a suffix K, M, B (or G), T (\"15T\"), got \"" +
                        std::string(text) + "\"");
  // 1e308T was infinite: the time and cost to train became null in the report (issue 19).
  if (!(*tokens <= kMaxTokens))
    throw SpecError(
        std::string(option), "",
        "expected at most 1e18 tokens (Llama 3 405B: 1.56e13, arXiv:2407.21783), got \"" + std::string(text) + "\"");
  return *tokens;
}

long long whole_number_option(std::string_view option, const std::string& text, long long lo, long long hi,
                              std::string_view what) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < lo || value > hi) {
    // A bound at the type's limit is no bound to state.
    constexpr long long kNone = std::numeric_limits<long long>::max();
    std::string range;
    if (lo != -kNone - 1 && hi != kNone)
      range = " from " + std::to_string(lo) + " to " + std::to_string(hi);
    else if (lo != -kNone - 1)
      range = " >= " + std::to_string(lo);
    else if (hi != kNone)
      range = " <= " + std::to_string(hi);
    throw SpecError(std::string(option), "", "expected " + std::string(what) + range + ", got \"" + text + "\"");
  }
  return value;
}

std::size_t simulation_jobs(const std::optional<std::string>& text) {
  if (!text) return std::max(1U, std::thread::hardware_concurrency());
  return static_cast<std::size_t>(whole_number_option("--jobs", *text, 1, kMaxJobs, "a number of simulations at once"));
}

SimulationOptions simulation_options(const SimulationRequest& request) {
  SimulationOptions options;
  options.fidelity = request.fidelity.value_or(options.fidelity);
  options.collective_algorithm = request.algorithm.value_or(options.collective_algorithm);
  options.algorithm_by_communicator = request.algorithm_by_group;
  options.network_profile = request.network_profile.value_or(options.network_profile);
  options.timeline_path = request.timeline_path.value_or("");
  options.traffic_classes = !request.exhaustive.value_or(false);
  options.adaptive_traffic_classes = request.adaptive_classes;
  if (request.trace_host) {
    if (*request.trace_host != "measured" && *request.trace_host != "none")
      throw SpecError("--trace-host", "", "expected \"measured\" or \"none\", got \"" + *request.trace_host + "\"");
    options.measured_host = *request.trace_host == "measured";
  }
  if (request.timeline_classes) {
    if (*request.timeline_classes < 1)
      throw SpecError(
          "--timeline-ranks", "",
          "expected a positive number of rank classes, got \"" + std::to_string(*request.timeline_classes) + "\"");
    options.timeline_classes = static_cast<std::size_t>(*request.timeline_classes);
  }
  if (request.train_tokens) options.train_tokens = parse_token_count(*request.train_tokens, "--train-tokens");
  const bool training_run = options.train_tokens.has_value();
  const auto needs_tokens = [&](const char* option) {
    if (!training_run) throw SpecError(option, "", "is an option of the time to train: give --train-tokens too");
  };
  if (request.checkpoint_interval_s) {
    needs_tokens("--checkpoint-interval-s");
    const double v = *request.checkpoint_interval_s;
    if (!std::isfinite(v) || !(v > 0.0))
      throw SpecError("--checkpoint-interval-s", "", "expected seconds > 0, got " + std::to_string(v));
    options.checkpoint_interval_s = v;
  }
  if (request.time_to_train_runs) {
    needs_tokens("--runs");
    const std::int64_t v = *request.time_to_train_runs;
    if (v < 1 || v > 1000000)
      throw SpecError("--runs", "", "expected 1 to 1000000 Monte Carlo runs, got " + std::to_string(v));
    options.time_to_train_runs = static_cast<int>(v);
  }
  if (request.time_to_train_seed) {
    needs_tokens("--seed");
    if (*request.time_to_train_seed < 0)
      throw SpecError("--seed", "", "expected a seed >= 0, got " + std::to_string(*request.time_to_train_seed));
    options.time_to_train_seed = static_cast<std::uint64_t>(*request.time_to_train_seed);
  }
  return options;
}

}  // namespace clustersim
