#pragma once
// The requests of a serving run: generated from the spec's traffic (arrival process, prompt and output
// length distributions, seed) or read from a request trace file.
//
// Random numbers: std::mt19937_64 (its output is fixed by the C++ standard) through the portable
// transforms of sim/core/random_draw and this file's zipf table (the std:: distributions are not the
// same across standard libraries), so a seed gives the same requests everywhere.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "sim/serving/serving_spec.hpp"

namespace clustersim {

struct RequestArrival {
  double arrival_s = 0.0;
  std::int32_t prompt_tokens = 0;
  std::int32_t output_tokens = 0;  // tokens generated, the first included (>= 1)
  std::int32_t prefix_group = -1;  // shared prefix group (traffic.prefix_groups); -1: none
  // Closed loop with think time: the pause before the send this request's index stands for (the
  // engine's (k - concurrency + 1)-th departure releases a send think_s later).
  double think_s = 0.0;
};

// A closed loop's request not sent yet: the serving engine sets its arrival when a request leaves.
inline constexpr double kClosedLoopPending_s = std::numeric_limits<double>::infinity();

// The requests of `traffic`, in arrival order. A trace is read from traffic.trace (see below); a
// closed loop's first `concurrency` arrive at 0 and the others are pending; else arrivals start at
// the first inter-arrival time after 0. With traffic.think_time_s the closed loop's first
// `concurrency` arrive at their pauses (think_s) sorted (the i-th at the i-th shortest) and each
// later request carries its own pause.
std::vector<RequestArrival> make_traffic(const TrafficSpec& traffic);

// The names of the length distributions (the spec's choices for traffic.prompt/output.distribution).
std::vector<std::string> length_distribution_names();

// A request trace: CSV with a header naming arrival_s, prompt_tokens, output_tokens (other columns
// ignored), or JSONL (`.jsonl`: one object a line with those keys). Arrival times >= 0 and not
// decreasing; token counts integers >= 1 (at most 2^24). A bad row is a SpecError naming the file,
// "line N/column NAME" (JSONL: the key, or the column of a JSON syntax error).
std::vector<RequestArrival> read_request_trace(const std::string& path);
std::vector<RequestArrival> parse_request_trace(std::string_view text, const std::string& file, bool jsonl);

}  // namespace clustersim
