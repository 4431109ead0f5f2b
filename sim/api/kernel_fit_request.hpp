#pragma once
// calibrate's kernel-model fit as the front ends take it (the CLI's MEASUREMENTS, --gpu, --held-out,
// --description, --data; Python's calibrate() keywords), with its defaults and checks written once.
#include <optional>
#include <string>
#include <vector>

#include "sim/api/measurement_files.hpp"
#include "sim/hardware/gpu_spec.hpp"
#include "sim/hardware/kernel_fit.hpp"

namespace clustersim {

struct KernelFitRequest {
  std::vector<std::string> measurements;   // PATH or PATH#SELECTOR, recorded in the profile as given; >= 1
  std::vector<std::string> held_out;       // kept out of the fit, recorded for `calibrate --report`
  std::optional<std::string> gpu;          // a catalogue id; none: the one GPU the files name
  std::optional<std::string> description;  // none: "kernel-model parameters of <GPU name> fitted by ..."
  std::optional<std::string> data_dir;     // where relative paths are looked up; none: calibration/data
  std::vector<std::string> fixed;          // parameters kept at the catalogue's values (KernelFitOptions)
};

// What the fit runs on: the catalogue GPU, its measurements (read and selected), the options recorded
// in the profile, and the data directory the held-out files are read from.
struct KernelFitInput {
  GpuSpec base;
  MeasurementSelection selection;
  KernelFitOptions options;
  std::string data_dir;
};

// The data directory of a request (its default applied).
std::string measurement_data_dir(const std::optional<std::string>& data_dir);

// Checks the request (SpecError("measurements") without files, SpecError("--gpu") for an unknown
// GPU, before any file is read) and reads the measurements.
KernelFitInput kernel_fit_input(const KernelFitRequest& request);

// The fitted profile of a request: fit_kernel_model over kernel_fit_input.
CalibrationProfile fit_kernel_profile(const KernelFitInput& input);

}  // namespace clustersim
