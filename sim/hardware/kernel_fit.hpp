#pragma once
// Fitting the kernel model's parameters of one GPU to measured kernel times: a nonlinear least-squares
// fit of ln(predicted / measured) per kernel family. The method is described at the top of
// kernel_fit.cpp; the result is a calibration profile with each parameter's provenance.
#include <span>
#include <string>
#include <vector>

#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "sim/hardware/kernel_measurement.hpp"

namespace clustersim {

struct KernelFitOptions {
  std::vector<std::string> fitted_on;  // recorded in the profile (the measurement arguments)
  std::vector<std::string> held_out;   // recorded in the profile, for `clustersim calibrate --report`
  std::string description;
  // Parameters kept at the catalogue's values: not fitted, not in the profile (what the measurements
  // cannot fix, e.g. gemm_memory_efficiency on a sweep with no GEMM bound by HBM). Each must be a
  // parameter the fit knows (fit_parameter_names); checked by fit_kernel_model.
  std::vector<std::string> fixed;
};

// Fits the parameters of `base` (a catalogue entry) that `measurements` constrain, starting from the
// catalogue's values. Every measurement must be of base's GPU. Throws SpecError when there is nothing
// to fit (no kernel measurement).
CalibrationProfile fit_kernel_model(const GpuSpec& base, std::span<const KernelMeasurement> measurements,
                                    const KernelFitOptions& options);

// Every parameter the fit can set, in fitting order (the families' of kernel_fit.cpp).
std::vector<std::string> fit_parameter_names();

}  // namespace clustersim
