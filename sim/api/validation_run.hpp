#pragma once
// Replaying a validation dataset: every supported row simulated (each in its own child process, a
// few at a time), its error against the measurement, and the summary (the result's types:
// sim/validation/validation_result.hpp). It calls simulate, hence the application layer.
#include "sim/validation/validation_dataset.hpp"
#include "sim/validation/validation_result.hpp"

namespace clustersim {

// Throws SpecError for an unknown fidelity; row failures are results, not exceptions.
ValidationResult run_validation(const ValidationDataset& dataset, const ValidationOptions& options);

}  // namespace clustersim
