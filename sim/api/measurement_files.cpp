#include "sim/api/measurement_files.hpp"

#include <filesystem>

#include "sim/core/error.hpp"
#include "sim/hardware/kernel_measurement.hpp"

namespace clustersim {

std::string resolve_measurement_argument(const std::string& argument, const std::string& data_dir) {
  const std::string folder = data_dir.empty() ? std::string(kDefaultMeasurementDataDir) : data_dir;
  const auto hash = argument.find('#');
  const std::string path = argument.substr(0, hash);
  const std::string selector = hash == std::string::npos ? "" : argument.substr(hash);
  if (std::filesystem::exists(path)) return argument;
  const std::filesystem::path in_data = std::filesystem::path(folder) / path;
  if (std::filesystem::exists(in_data)) return in_data.string() + selector;
  if (is_compiled_in_measurement_file(path)) return argument;  // calibration/power_cap/ (README there)
  throw SpecError(path, "",
                  "no such measurement file (nor in the reference data folder " + folder + "; pass --data DIR)");
}

bool compared_by_throughput(std::string_view operation) {
  return operation == "gemm" || operation == "gemm_max_achievable" || operation == "grouped_gemm";
}

}  // namespace clustersim
