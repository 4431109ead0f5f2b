#pragma once
// The SM clock of a tensor-core kernel under the GPU's power cap (TDP): the power the kernel would
// draw at the boost clock, the clock the tensor power budget allows it to sustain (the TDP for a
// sustained load; more in a step whose other phases draw less: sim/power/step_clock.hpp), and the
// mean clock over a kernel that starts at boost and settles to that clock. Equations at the top of
// power_capped_clock.cpp.
#include "sim/hardware/gpu_spec.hpp"

namespace clustersim {

struct CappedClock {
  double sustained_fraction = 1.0;  // clock the power budget allows in steady state, / boost clock (<= 1)
  double mean_fraction = 1.0;       // mean clock over the kernel, / boost clock
  double duration_s = 0.0;          // the kernel's compute time at that clock
  double sustained_power_w = 0.0;   // the GPU's power at the sustained clock (<= the power budget)
};

// True when the GPU's catalogue entry models the clock under the cap (tensor_boost_W > 0).
bool models_power_cap(const GpuSpec& gpu);

// True when it does, but tensor_boost_W is a prior rather than fitted to measurements of this GPU:
// its source (GpuSpec::sources) starts with "assumed" (a calibration profile's fit replaces it with
// "fitted ..."). The report flags the clock as a prior (power.clock_cap_prior).
bool power_cap_is_prior(const GpuSpec& gpu);

// The power (W) tensor-core kernels may draw: GpuSpec::tensor_power_budget_w, or the TDP when unset.
double tensor_power_budget_w(const GpuSpec& gpu);

// The power of the dtype's tensor path fully busy at a clock, / the 16-bit path's at that clock:
// GpuSpec::tensor_fp8_power_ratio for fp8, mxfp8 and nvfp4, 1 for the 16-bit and tf32 paths.
double tensor_power_weight(const GpuSpec& gpu, Precision precision);

// The fraction of tensor-core issue cycles a large, well-shaped `precision` GEMM keeps busy:
// GpuSpec::gemm_fp8_efficiency for fp8, mxfp8 and nvfp4 where set, gemm_max_efficiency otherwise.
double large_gemm_utilization(const GpuSpec& gpu, Precision precision);

// The power (W) of a large `precision` GEMM at the clock the GPU's tensor power budget allows
// (tensor_power_budget_w): min(budget, its power at the boost clock). The tensor power of the step's
// energy (sim/power): the rule that sets the kernels' clock.
double large_gemm_power_w(const GpuSpec& gpu, Precision precision);

// Power (W) of the GPU running its `precision` tensor cores at `utilization` (the fraction of
// tensor-core issue cycles busy, in [0, 1]) at clock `clock_fraction` of the boost clock.
double tensor_power_w(const GpuSpec& gpu, double utilization, double clock_fraction,
                      Precision precision = Precision::bf16);

// The clock of a `precision` tensor-core kernel whose compute part takes `boost_compute_s` at the
// boost clock with the tensor cores busy `utilization` of the cycles. A GPU without a power-cap model
// keeps the boost clock.
CappedClock capped_clock(const GpuSpec& gpu, double utilization, double boost_compute_s,
                         Precision precision = Precision::bf16);

}  // namespace clustersim
