#include "sim/validation/validation_result.hpp"

#include <algorithm>

#include "sim/core/enum_names.hpp"

namespace clustersim {

namespace {

constexpr EnumName<RowStatus> kRowStatusNames[] = {
    {RowStatus::simulated, "simulated"},
    {RowStatus::unsupported, "unsupported"},
    {RowStatus::failed, "failed"},
};

}  // namespace

const char* to_string(RowStatus s) {
  return name_of(kRowStatusNames, s);
}

ValidationSummary summarize(const std::vector<RowResult>& rows) {
  ValidationSummary s;
  s.rows = rows.size();
  std::vector<double> errors, peak_errors;
  for (const auto& r : rows) {
    switch (r.status) {
      case RowStatus::simulated:
        ++s.simulated;
        errors.push_back(r.error);
        if (r.has_peak_memory) peak_errors.push_back(r.peak_memory_error);
        if (!r.fits) ++s.not_fitting;
        break;
      case RowStatus::unsupported:
        ++s.unsupported;
        break;
      case RowStatus::failed:
        ++s.failed;
        break;
    }
  }
  s.errors = summarize_errors(errors);
  s.peak_memory_errors = summarize_errors(peak_errors);
  return s;
}

}  // namespace clustersim
