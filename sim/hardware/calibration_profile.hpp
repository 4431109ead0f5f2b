#pragma once
// A calibration profile: kernel-model parameters of one GPU fitted to measurements, each with its
// provenance (value, the measurements it came from, the domain of the fit, the fit's residual).
// Fitted profiles ship in calibration/profiles/<gpu-id>.json, compiled into the library; the simulator
// applies the one of its GPU (apply_calibration_profile) and reports kernels outside the fitted
// domain. File format at the top of calibration_profile.cpp; `clustersim calibrate` writes it.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/hardware/gpu_spec.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim {

struct ValueRange {
  double min = 0.0;
  double max = 0.0;
  bool contains(double v) const { return v >= min && v <= max; }
};

// The kernels a parameter was fitted on: a kernel role (kernel_role() of kernel_model.hpp), the
// dtypes of tensor-core kernels (fp16 and bf16 count as one: same path, same rate), the ranges of
// their shapes (gemm and attention: m, n, k) and of the bytes they moved. An absent range does not
// restrict.
struct FittedDomain {
  std::string role;
  std::vector<Precision> precisions;  // empty: any
  std::optional<ValueRange> m, n, k, bytes;

  bool contains(const ComputeOp& op) const;
  std::string describe() const;  // "gemm fp16 m 1..4096 n 128..22016 k 512..4096"
};

// How well the fit of a parameter's kernel family reproduces its own measurements.
struct FitResidual {
  std::size_t measurements = 0;
  double rms_log_error = 0.0;     // sqrt(mean(ln(predicted / measured)^2))
  double median_abs_error = 0.0;  // |predicted / measured - 1|
  double p90_abs_error = 0.0;
};

struct FittedParameter {
  std::string name;                  // the catalogue key, with its unit: "gemm_max_efficiency", "kernel_launch_us"
  double value = 0.0;                // in the key's unit
  std::string source;                // the measurements it was fitted from
  std::vector<FittedDomain> domain;  // the kernels whose times constrained it
  FitResidual residual;
};

struct CalibrationProfile {
  std::string gpu;   // catalogue id the profile is for
  std::string name;  // file stem, or "<gpu> (file)" for a profile read from a file
  std::string description;
  std::vector<std::string> fitted_on;  // measurement files of the fit (data-relative paths, #selectors)
  std::vector<std::string> held_out;   // measurements kept out of the fit, for `calibrate --report`
  std::vector<FittedParameter> parameters;

  const FittedParameter* find(std::string_view parameter) const;
};

// What the simulator ran with, for the report's provenance.calibration.
struct CalibrationInfo {
  std::string profile;      // profile name; empty when none applied
  std::string description;  // one line: which values are fitted, from what, and which are assumed
  std::optional<CalibrationProfile> applied;
};

std::vector<std::string> calibration_profile_names();  // the compiled-in profiles (their GPU ids)
std::optional<CalibrationProfile> find_calibration_profile(std::string_view gpu_id);
// The compiled-in profile of `gpu_id`; SpecError("--gpu") listing the profiles when there is none.
CalibrationProfile shipped_calibration_profile(std::string_view gpu_id);
CalibrationProfile parse_calibration_profile(std::string_view json_text, const std::string& file);
std::string calibration_profile_to_json(const CalibrationProfile& profile);

// Sets the profile's fitted values on `gpu` (sources say "fitted: ..."), except values the user gave
// explicitly in an inline GPU object (their source starts with "given in "), which are kept.
void apply_calibration_profile(GpuSpec& gpu, const CalibrationProfile& profile);
// The compiled-in profile of gpu.id, applied; without one, the catalogue's assumed values stay and
// the description says so.
CalibrationInfo apply_calibration_profile(GpuSpec& gpu);

// True when some fitted domain of the profile has the op's role and contains its shape and dtype.
bool in_fitted_domain(const CalibrationProfile& profile, const ComputeOp& op);
// The compute kernels of `graph` that lie outside the profile's fitted domains, one line per role:
// how many, the fitted domain, and an example op. Empty when every kernel is inside.
std::vector<std::string> kernels_outside_fitted_domain(const CalibrationProfile& profile, const ExecutionGraph& graph);

}  // namespace clustersim
