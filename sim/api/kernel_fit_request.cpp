#include "sim/api/kernel_fit_request.hpp"

#include "sim/core/error.hpp"
#include "sim/hardware/gpu_catalogue.hpp"

namespace clustersim {

std::string measurement_data_dir(const std::optional<std::string>& data_dir) {
  return data_dir.value_or(std::string(kDefaultMeasurementDataDir));
}

KernelFitInput kernel_fit_input(const KernelFitRequest& request) {
  if (request.measurements.empty()) throw SpecError("measurements", "", "give the measurement files to fit");
  if (request.gpu) find_gpu(*request.gpu, "--gpu", "");  // a bad GPU first, before any file is read
  KernelFitInput input;
  input.data_dir = measurement_data_dir(request.data_dir);
  input.selection = select_measurements(request.measurements, input.data_dir, request.gpu.value_or(""));
  input.base = find_gpu(input.selection.gpu, "--gpu", "");
  input.options.fitted_on = request.measurements;
  input.options.held_out = request.held_out;
  input.options.fixed = request.fixed;
  input.options.description =
      request.description.value_or("kernel-model parameters of " + input.base.name + " fitted by clustersim calibrate");
  return input;
}

CalibrationProfile fit_kernel_profile(const KernelFitInput& input) {
  return fit_kernel_model(input.base, input.selection.kernels, input.options);
}

}  // namespace clustersim
