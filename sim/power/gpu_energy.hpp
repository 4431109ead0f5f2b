#pragma once
// Energy of one GPU over one step, from where its step went (the replay's activity accounting).
//
// The step of length T splits into
//   tensor_s        tensor-core kernels (gemm, attention)                  at tensor_w,
//                   low_precision_tensor_s of them in fp8/mxfp8/nvfp4     at low_precision_tensor_w
//   vector_s        other kernels (memory- or vector-bound)                at vector_w
//   exposed comm    a collective runs while the compute stream is idle     at communication_w
//   waiting_s       none of these: T - tensor - vector - exposed comm      at waiting_w
// and a collective that runs under compute (overlapped comm) adds overlap_communication_w for its
// duration, capped so that compute plus overlap never exceeds the TDP. The overlap is spread over
// tensor and vector time in proportion to their lengths. Energy = sum of power x time; joules.
#include "sim/power/power_catalogue.hpp"

namespace clustersim {

struct GpuActivity {
  double tensor_s = 0.0;
  double low_precision_tensor_s = 0.0;  // the part of tensor_s in fp8, mxfp8 or nvfp4 kernels
  double vector_s = 0.0;
  double exposed_communication_s = 0.0;
  double overlapped_communication_s = 0.0;
  double waiting_s = 0.0;
};

// The activity of a rank whose compute kernels took tensor_s + vector_s, whose collectives were in
// flight for communication_s (the union of their intervals), exposed_communication_s of which with
// the compute stream idle, in a step of step_time_s; low_precision_tensor_s of the tensor time in fp8,
// mxfp8 or nvfp4 kernels (clamped to [0, tensor_s]).
GpuActivity gpu_activity(double tensor_s, double vector_s, double communication_s, double exposed_communication_s,
                         double step_time_s, double low_precision_tensor_s = 0.0);

double gpu_energy_j(const GpuPowerModel& power, const GpuActivity& activity);
// The highest power of any activity the GPU had (W).
double gpu_peak_w(const GpuPowerModel& power, const GpuActivity& activity);

}  // namespace clustersim
