#pragma once
// Kernel time of a compute op on a GPU: a roofline with calibrated efficiencies.
//
//   t = launch + max(flops / (peak(dtype) * eff_compute), bytes / (hbm_bw * eff_memory))
//
// GEMMs add tile and wave quantization over the SMs; see kernel_model.cpp for the equations.
#include "sim/hardware/gpu_spec.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim {

struct KernelTime {
  double time_s = 0.0;
  bool compute_bound = false;  // true when the compute term dominates the memory term
};

KernelTime kernel_time(const GpuSpec& gpu, const ComputeOp& op);

}  // namespace clustersim
