#pragma once
// Kernel time of a compute op on a GPU: a roofline with calibrated efficiencies.
//
//   t = fixed + max(flops / (peak(dtype) * eff_compute), bytes / (hbm_bw * eff_memory))
//
// GEMMs add tile and wave quantization over the SMs and an epilogue (the store of C) after the main
// loop, memory-bound kernels L2 reuse and a per-row bandwidth limit; the equations are at the top of
// kernel_model.cpp.
#include <string_view>

#include "sim/hardware/gpu_spec.hpp"
#include "workloads/execution_graph.hpp"

namespace clustersim {

struct KernelTime {
  double time_s = 0.0;
  bool compute_bound = false;  // true when the compute term dominates the memory term
};

// How a kernel's time is taken. per_call: the time one call adds to a stream of ops, as a framework
// or a benchmark times it (CUDA events around the call, or a loop's time per call): what the
// simulator uses. kernel_duration: a profiler's kernel duration (from the kernel's start on the GPU
// to its end; DeepGEMM's bench_kineto): the library's host-side work per call is outside it.
enum class KernelTiming { per_call, kernel_duration };
constexpr KernelTiming kKernelTimings[] = {KernelTiming::per_call, KernelTiming::kernel_duration};
// "per_call", "kernel_duration": the names measurement files use.
std::string_view to_string(KernelTiming timing);

KernelTime kernel_time(const GpuSpec& gpu, const ComputeOp& op, KernelTiming timing = KernelTiming::per_call);
// True for the parts of an offloaded optimizer step (training.optimizer_offload cpu) that are no GPU
// kernel: the copies over the host link and the CPU's update, timed by host_memory_tier.hpp (a
// software stack's kernel-time scale does not apply to them).
bool host_side_op(const ComputeOp& op);

// What the kernel does, as the model tells kernels apart: "gemm", "attention", and for memory-bound
// kernels "activation", "rope", "elementwise", "normalization", "embedding", "optimizer", "loss" (by
// kernel class, and for elementwise kernels by the last part of the op's name, e.g. "fwd.activation").
// Calibration profiles record their fitted domains by role.
std::string_view kernel_role(const ComputeOp& op);
// The catalogue key of the efficiency that scales the op's time ("gemm_max_efficiency",
// "gemm_fp8_efficiency", "attention_efficiency", "activation_efficiency", "memory_efficiency", ...).
std::string_view efficiency_parameter(const ComputeOp& op);

}  // namespace clustersim
