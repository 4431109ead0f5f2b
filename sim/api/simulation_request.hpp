#pragma once
// simulate()'s options as the front ends take them (the CLI's flags, Python's keywords), with their
// defaults and checks written once: both front ends fill a SimulationRequest and call
// simulation_options().
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
};

// One --algorithm value: "NAME" (every communicator) or "GROUP=NAME" (one process group).
void add_algorithm(SimulationRequest& request, std::string_view value);

// The options simulate() takes. Throws SpecError naming the option for a value out of range.
SimulationOptions simulation_options(const SimulationRequest& request);

}  // namespace clustersim
