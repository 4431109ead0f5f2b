#pragma once
// Measured kernel times, read from the formats `clustersim calibrate` accepts (formats and their
// mapping to kernel descriptions at the top of kernel_measurement.cpp):
//   - clustersim measurement JSON ("format": "clustersim-measurements/1"), written by the CUDA
//     microbenchmarks of calibration/microbench (documented in calibration/README.md);
//   - Vidur's per-operator tables (vidur/compute/<gpu>/<model>/mlp.csv);
//   - the published records of calibration/data/published/microbench.json (GEMM tables,
//     FlashAttention, STREAM bandwidth).
// A path may end in "#SELECTOR" to keep only the records whose id is listed: "#micro-0001..micro-0008"
// (an inclusive range of ids), "#micro-0015", or a comma-separated list of both.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/hardware/kernel_model.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim {

struct KernelMeasurement {
  std::string gpu;        // catalogue id of the GPU it was measured on ("" unknown)
  std::string operation;  // what was timed, as the source names it: "mlp_up_proj", "gemm", "copy"
  std::string name;       // the op's name for the kernel model (its role: "vidur.activation")
  KernelClass kernel = KernelClass::gemm;
  Precision precision = Precision::fp16;
  double flops = 0.0;
  double bytes = 0.0;
  std::uint32_t m = 0, n = 0, k = 0, batch = 1;
  bool causal = false, backward = false;  // attention (ComputeOp)
  double time_s = 0.0;
  int repetitions = 0;  // 0: not given by the source
  std::string file;     // the measurement file it was read from
  std::string source;   // "path:row 17" (17th data row), "path#micro-0015", "path/measurements/3"
  std::string group;    // the source's grouping, for held-out splits: Vidur's model, "" otherwise
  int tp = 0;           // tensor-parallel degree of the shape (Vidur), 0 otherwise
  KernelTiming timing = KernelTiming::per_call;  // how the source took the time (kernel_model.hpp)

  // The kernel description (its name is a view into this measurement).
  ComputeOp op() const;
};

struct MeasurementSet {
  std::vector<KernelMeasurement> kernels;
  std::size_t skipped = 0;         // records that are not GPU kernel times (collectives, specs)
  std::vector<std::string> notes;  // what was skipped and why, one line per kind
};

// Reads one measurement file (format detected from its content). Throws SpecError naming the file
// and the JSON path ("/measurements/3/time_s") or CSV cell ("row 17/column num_tokens") of a bad value.
// A path that names no file but a measurement file compiled into the library (calibration/power_cap/,
// by its path in the source tree: "calibration/power_cap/h100-device-gemm.json") reads that file.
MeasurementSet read_measurements(const std::string& path);
// True when `path` (without a "#..." selector) names a measurement file compiled into the library.
bool is_compiled_in_measurement_file(const std::string& path);

// The catalogue id for a device name ("NVIDIA H100 80GB HBM3" -> "h100-sxm5-80gb"); "" when the
// catalogue has no such GPU.
std::string gpu_id_for_device(std::string_view device_name);

}  // namespace clustersim
