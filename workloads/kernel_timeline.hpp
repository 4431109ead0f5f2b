#pragma once
// The measured GPU kernels of one training step of one rank, with their times and the CPU launches
// that issued them: what `clustersim calibrate --from-trace` compares with the model. Read from a
// PyTorch profiler (Kineto) trace by the same parser as the "pytorch" trace format (kineto_trace.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/kernel_class.hpp"

namespace clustersim {

struct TimelineKernel {
  std::string name;
  bool communication = false;                     // an NCCL/RCCL kernel (name starting "nccl"/"rccl")
  bool memcpy = false;                            // a gpu_memcpy / gpu_memset activity, not a kernel
  KernelClass kernel = KernelClass::elementwise;  // from the name (kernel_names.hpp); compute kernels
  std::int64_t stream = 0;
  double start_us = 0.0, duration_us = 0.0;  // on the GPU
  // The CPU launch (cudaLaunchKernel & co, matched by correlation id); unset when the trace lacks it.
  std::optional<double> launch_start_us, launch_duration_us;
};

struct KernelTimeline {
  std::string file;
  std::string step;                     // "ProfilerStep#6"; empty when the trace marks no steps (the whole trace)
  double step_start_us = 0.0;           // the ProfilerStep's start (else the first launch or kernel)
  double step_end_us = 0.0;             // the later of the ProfilerStep's end and its last kernel's end
  std::vector<TimelineKernel> kernels;  // launched inside the step, in GPU start order

  double step_s() const { return (step_end_us - step_start_us) * 1e-6; }
};

// One rank's trace file (.json or .json.gz). `step`: "last" (the last ProfilerStep, or the whole
// trace when it marks none) or a step number (else SpecError("--step")). Throws SpecError(path, JSON
// path, ...) for a file that is not a Chrome trace, an unknown step, or a step with no GPU kernel.
KernelTimeline read_kernel_timeline(const std::string& path, const std::string& step = "last");

}  // namespace clustersim
