#pragma once
// A catalogue GPU with its shipped calibration profile applied, as a simulation times its kernels.
#include <string>

#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"

namespace clustersim::testing {

inline GpuSpec calibrated_gpu(const std::string& id) {
  GpuSpec gpu = find_gpu(id, "test", "");
  apply_calibration_profile(gpu);
  return gpu;
}

}  // namespace clustersim::testing
