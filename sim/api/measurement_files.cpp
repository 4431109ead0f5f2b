#include "sim/api/measurement_files.hpp"

#include <filesystem>
#include <set>
#include <utility>

#include "sim/core/error.hpp"
#include "sim/core/spec_source.hpp"
#include "sim/hardware/kernel_measurement.hpp"

namespace clustersim {

std::string resolve_measurement_argument(const std::string& argument, const std::string& data_dir) {
  const std::string folder = data_dir.empty() ? std::string(kDefaultMeasurementDataDir) : data_dir;
  const auto hash = argument.find('#');
  const std::string path = argument.substr(0, hash);
  const std::string selector = hash == std::string::npos ? "" : argument.substr(hash);
  if (path_exists(path)) return argument;
  const std::filesystem::path in_data = std::filesystem::path(folder) / path;
  if (path_exists(in_data.string())) return in_data.string() + selector;
  if (is_compiled_in_measurement_file(path)) return argument;  // calibration/power_cap/ (README there)
  throw SpecError(path, "",
                  "no such measurement file (nor in the reference data folder " + folder + "; pass --data DIR)");
}

MeasurementSelection select_measurements(const std::vector<std::string>& arguments, const std::string& data_dir,
                                         const std::string& gpu) {
  std::vector<std::pair<std::string, MeasurementSet>> read;
  std::set<std::string> named;
  for (const auto& argument : arguments) {
    read.emplace_back(argument, read_measurements(resolve_measurement_argument(argument, data_dir)));
    for (const auto& m : read.back().second.kernels)
      if (!m.gpu.empty()) named.insert(m.gpu);
  }
  MeasurementSelection out;
  out.gpu = gpu;
  if (out.gpu.empty()) {
    if (named.size() != 1) {
      std::string list;
      for (const auto& g : named)
        list += (list.empty() ? "" : ", ") + g;
      throw SpecError("--gpu", "",
                      named.empty()
                          ? "cannot tell which GPU the measurements are of: name it (--gpu ID, gpu=ID)"
                          : "the measurements are of several GPUs (" + list + "): name one (--gpu ID, gpu=ID)");
    }
    out.gpu = *named.begin();
  }
  for (auto& [argument, set] : read) {
    std::size_t other = 0;
    for (auto& m : set.kernels) {
      if (!m.gpu.empty() && m.gpu != out.gpu) {
        ++other;
        continue;
      }
      out.kernels.push_back(std::move(m));
    }
    for (const auto& n : set.notes)
      out.notes.push_back(argument + ": " + n);
    if (other > 0) out.notes.push_back(argument + ": " + std::to_string(other) + " measurements of other GPUs skipped");
  }
  return out;
}

bool compared_by_throughput(std::string_view operation) {
  return operation == "gemm" || operation == "gemm_max_achievable" || operation == "grouped_gemm";
}

}  // namespace clustersim
