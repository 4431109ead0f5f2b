#pragma once
// How calibrate finds its measurement files and compares them, for both front ends (the CLI's
// calibrate, Python's calibrate / kernel_errors / read_measurements).
#include <string>
#include <string_view>
#include <vector>

#include "sim/hardware/kernel_measurement.hpp"

namespace clustersim {

// Where relative measurement paths are looked up when they do not exist as given: the measurements
// shipped with the repository (calibration/data/README.md), relative to the working directory.
inline constexpr std::string_view kDefaultMeasurementDataDir = "calibration/data";

// The file to read for a measurement argument ("PATH" or "PATH#id..id", the selector kept): the path
// as given when it exists, else under `data_dir` (empty: the default), else a measurement file the
// library carries (calibration/power_cap/). SpecError naming the path otherwise.
std::string resolve_measurement_argument(const std::string& argument, const std::string& data_dir = "");

// The measurements of some files for one GPU, as calibrate reads them.
struct MeasurementSelection {
  std::vector<KernelMeasurement> kernels;  // of `gpu`, and those that name no GPU (taken to be of it)
  std::vector<std::string> notes;          // "ARGUMENT: what was skipped", in file order
  std::string gpu;
};

// Reads every argument (resolve_measurement_argument against `data_dir`) and keeps the measurements of
// `gpu`; `gpu` empty: the one GPU the files name (SpecError("--gpu") when they name none or several).
MeasurementSelection select_measurements(const std::vector<std::string>& arguments, const std::string& data_dir,
                                         const std::string& gpu);

// Published GEMM-table records (gemm, gemm_max_achievable, grouped_gemm) are compared by throughput
// (TFLOP/s), every other operation by time.
bool compared_by_throughput(std::string_view operation);

}  // namespace clustersim
