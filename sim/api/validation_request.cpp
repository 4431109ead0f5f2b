#include "sim/api/validation_request.hpp"

#include <climits>

#include "sim/core/error.hpp"

namespace clustersim {
namespace {

std::int64_t positive(const std::optional<std::int64_t>& v, const char* option) {
  if (*v < 1 || *v > INT_MAX) throw SpecError(option, "", "expected a positive integer, got " + std::to_string(*v));
  return *v;
}

}  // namespace

ValidationOptions validation_options(const ValidationRequest& request) {
  ValidationOptions o;
  o.fidelity = request.fidelity.value_or(o.fidelity);
  if (request.jobs) o.jobs = static_cast<int>(positive(request.jobs, "--jobs"));
  return o;
}

std::size_t validation_row_limit(const ValidationRequest& request) {
  return request.limit ? static_cast<std::size_t>(positive(request.limit, "--limit")) : 0;
}

}  // namespace clustersim
