#pragma once
// simulate()'s options as the front ends take them (the CLI's flags, Python's keywords), with their
// defaults and checks written once: both front ends fill a SimulationRequest and call
// simulation_options().
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "sim/simulate.hpp"

namespace clustersim {

struct SimulationRequest {
  std::optional<std::string> fidelity;                    // a registered network backend; none: flow
  std::optional<std::string> algorithm;                   // every communicator's collective algorithm; none: auto
  std::map<std::string, std::string> algorithm_by_group;  // "dp" -> "ring"
  std::optional<std::string> network_profile;             // a profile name or file; none: auto
  std::optional<std::string> timeline_path;               // write the step's timeline there
  std::optional<std::int64_t> timeline_classes;           // rank classes in the timeline, >= 1; none: 64
  // Time to train (sim/training_run): tokens as a number with an optional suffix K, M, B (or G), T
  // ("15T" = 1.5e13), > 0; none: no time_to_train section.
  std::optional<std::string> train_tokens;
  std::optional<double> checkpoint_interval_s;     // > 0; none: Young/Daly
  std::optional<std::int64_t> time_to_train_runs;  // Monte Carlo runs, 1 .. 1e6; none: 1000
  std::optional<std::int64_t> time_to_train_seed;  // >= 0; none: 1
  // A trace's host: "measured" (a PyTorch trace's launch times, SimulationOptions::measured_host) or
  // "none"; none: "none".
  std::optional<std::string> trace_host;
  // Simulate every transfer (SimulationOptions::traffic_classes false); none: false.
  std::optional<bool> exhaustive;
  bool adaptive_classes = true;  // SimulationOptions::adaptive_traffic_classes
};

// "2e12", "15T", "300B" (or "300G"), "15M", "1K", "50M" (dollars): a finite number > 0 with an optional
// suffix K, M, B or G, T (case-insensitive); none for anything else. One rule for every such option.
// The suffix may overflow a finite number to infinity ("1e308T"): callers bound the value.
std::optional<double> parse_si_quantity(std::string_view text);

// "15T" -> 1.5e13 (parse_si_quantity), at most 1e18 (Llama 3 405B trained on 1.56e13). Throws SpecError
// naming `option` otherwise (`--tokens`, `--train-tokens`).
double parse_token_count(std::string_view text, std::string_view option);

// An option's whole-number value from `lo` to `hi`: the text read whole as an integer, or SpecError
// naming `option` ("--gpus") and saying "expected <what> from lo to hi" (a bound at long long's limit is
// not stated: "expected <what> >= lo", or "expected <what>" with neither). One rule for such options.
long long whole_number_option(std::string_view option, const std::string& text, long long lo, long long hi,
                              std::string_view what);

// Simulations at once (compare --jobs, each in its own child process: simulate_all) from the option's
// text: an integer from 1 to 1024; none: the machine's cores (at least 1). Throws SpecError("--jobs").
std::size_t simulation_jobs(const std::optional<std::string>& text);

// One --algorithm value: "NAME" (every communicator) or "GROUP=NAME" (one process group).
void add_algorithm(SimulationRequest& request, std::string_view value);

// The options simulate() takes. Throws SpecError naming the option for a value out of range.
SimulationOptions simulation_options(const SimulationRequest& request);

}  // namespace clustersim
