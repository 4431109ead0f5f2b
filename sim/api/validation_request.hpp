#pragma once
// validate's options as the front ends take them (the CLI's --fidelity/--jobs/--limit, Python's
// keywords), with their defaults and checks written once.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "sim/api/validation_run.hpp"

namespace clustersim {

struct ValidationRequest {
  std::optional<std::string> fidelity;  // none: flow
  std::optional<std::int64_t> jobs;     // simulations at once, >= 1; none: 2
  std::optional<std::int64_t> limit;    // only the first rows of each dataset, >= 1; none: every row
};

// The run's options; SpecError("--jobs" / "--limit") for a count below 1.
ValidationOptions validation_options(const ValidationRequest& request);
// The row limit load_validation_dataset takes (0: every row), checked as above.
std::size_t validation_row_limit(const ValidationRequest& request);

}  // namespace clustersim
