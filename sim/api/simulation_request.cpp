#include "sim/api/simulation_request.hpp"

#include "sim/core/error.hpp"

namespace clustersim {

void add_algorithm(SimulationRequest& request, std::string_view value) {
  const auto eq = value.find('=');
  if (eq == std::string_view::npos)
    request.algorithm = std::string(value);
  else
    request.algorithm_by_group[std::string(value.substr(0, eq))] = std::string(value.substr(eq + 1));
}

SimulationOptions simulation_options(const SimulationRequest& request) {
  SimulationOptions options;
  options.fidelity = request.fidelity.value_or(options.fidelity);
  options.collective_algorithm = request.algorithm.value_or(options.collective_algorithm);
  options.algorithm_by_communicator = request.algorithm_by_group;
  options.network_profile = request.network_profile.value_or(options.network_profile);
  options.timeline_path = request.timeline_path.value_or("");
  if (request.timeline_classes) {
    if (*request.timeline_classes < 1)
      throw SpecError(
          "--timeline-ranks", "",
          "expected a positive number of rank classes, got \"" + std::to_string(*request.timeline_classes) + "\"");
    options.timeline_classes = static_cast<std::size_t>(*request.timeline_classes);
  }
  return options;
}

}  // namespace clustersim
