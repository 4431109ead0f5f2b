// The clock of a tensor-core kernel under the power cap. SI units (W, s); clocks as fractions of the
// boost clock (GpuSpec::boost_clock_hz, the clock behind the datasheet's tensor peaks).
//
// Power of the GPU with its tensor cores of precision p busy a fraction u of the cycles at clock
// fraction phi (CMOS dynamic power C V^2 f with the voltage rising with the clock over the DVFS range):
//   P(u, phi) = idle_w + (tensor_boost_w - idle_w) * w(p) * u * phi^clock_power_exponent
// tensor_boost_w is what a fully busy 16-bit tensor path would draw at the boost clock without a cap;
// w(p) the power of the p path per busy cycle relative to it: 1 for bf16 / fp16 / tf32,
// tensor_fp8_power_ratio for fp8 / mxfp8 / nvfp4. One rule for every precision: the dynamic energy
// per flop at clock phi is (tensor_boost_w - idle_w) w(p) phi^(n-1) / peak(p) (peak at the boost
// clock), so fp8, with twice the flops per cycle and half the operand bytes per flop, spends
// w(fp8) / 2 of bf16's energy per flop. On the H100 w(fp8) = 0.406, the bound Azure's sustained
// cuBLASLt fp8 table at 700 W sets (its source in sim/hardware/catalogue/h100-sxm5-80gb.json): the
// table rises with size by wave quantization alone, so a sustained fp8 GEMM does not throttle at 700 W.
// The power controller holds P at most at the tensor power budget B: the clock a kernel sustains is
//   phi_cap = min(1, ((B - idle_w) / ((tensor_boost_w - idle_w) * w(p) * u)) ^ (1 / clock_power_exponent))
// and P(u, phi_cap) = min(P(u, 1), B). B = tdp_w for a sustained load (a loop of GEMMs: the
// calibration measurements); in a training step the controller caps the power averaged over its
// window, and the step's lower-power phases (memory-bound kernels, communication, waiting) leave the
// tensor kernels more: B = (tdp_w T - E_rest) / t_tensor, solved with the step
// (sim/power/step_clock.cpp) and handed in as GpuSpec::tensor_power_budget_w.
// A kernel starts at the boost clock (the clock recovers while the GPU runs lower-power kernels or
// waits) and the controller brings it to phi_cap with time constant tau = power_response_s:
//   phi(t) = phi_cap + (1 - phi_cap) exp(-t / tau)
// The kernel's cycles are fixed (its compute time at the boost clock, t_b), so its duration T solves
//   phi_cap T + (1 - phi_cap) tau (1 - exp(-T / tau)) = t_b        (tau = 0: T = t_b / phi_cap)
// and its mean clock is t_b / T: a short kernel runs near the boost clock, a long one at phi_cap.
// The utilization u is the kernel's: flops / (peak(dtype) * t_b) for a compute-bound kernel, the
// same over its memory time otherwise (the kernel model computes it).
// Only the sustained power enters the step's energy (sim/power): the short excursion above the TDP at
// a kernel's start is not counted.
#include "sim/hardware/power_capped_clock.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {
namespace {

constexpr int kNewtonIterations = 60;

// Duration T of a kernel of t_b boost-clock seconds: phi_cap T + (1 - phi_cap) tau (1 - e^(-T/tau)) = t_b.
// g(T) is increasing and concave: Newton from T = t_b (where g <= 0) rises monotonically to the root.
double throttled_duration_s(double t_b, double phi_cap, double tau) {
  if (phi_cap >= 1.0) return t_b;
  if (tau <= 0.0) return t_b / phi_cap;
  double t = t_b;
  for (int i = 0; i < kNewtonIterations; ++i) {
    const double decay = std::exp(-t / tau);
    const double g = phi_cap * t + (1.0 - phi_cap) * tau * (1.0 - decay) - t_b;
    const double slope = phi_cap + (1.0 - phi_cap) * decay;
    const double next = t - g / slope;
    if (!(next > t)) break;
    t = std::min(next, t_b / phi_cap);
  }
  return t;
}

}  // namespace

bool models_power_cap(const GpuSpec& gpu) {
  return gpu.tensor_boost_w > 0.0 && gpu.tdp_w > gpu.idle_w && gpu.clock_power_exponent > 0.0;
}

bool power_cap_is_prior(const GpuSpec& gpu) {
  if (!models_power_cap(gpu)) return false;
  const auto source = gpu.sources.find("tensor_boost_W");
  return source == gpu.sources.end() || source->second.rfind("assumed", 0) == 0;
}

double tensor_power_budget_w(const GpuSpec& gpu) {
  return gpu.tensor_power_budget_w > 0.0 ? gpu.tensor_power_budget_w : gpu.tdp_w;
}

double tensor_power_weight(const GpuSpec& gpu, Precision precision) {
  return low_precision(precision) ? gpu.tensor_fp8_power_ratio : 1.0;
}

double large_gemm_utilization(const GpuSpec& gpu, Precision precision) {
  if (low_precision(precision) && gpu.gemm_fp8_efficiency > 0.0) return gpu.gemm_fp8_efficiency;
  return gpu.gemm_max_efficiency;
}

double large_gemm_power_w(const GpuSpec& gpu, Precision precision) {
  return capped_clock(gpu, large_gemm_utilization(gpu, precision), 1.0, precision).sustained_power_w;
}

double tensor_power_w(const GpuSpec& gpu, double utilization, double clock_fraction, Precision precision) {
  const double u = std::clamp(utilization, 0.0, 1.0);
  return gpu.idle_w + (gpu.tensor_boost_w - gpu.idle_w) * tensor_power_weight(gpu, precision) * u *
                          std::pow(clock_fraction, gpu.clock_power_exponent);
}

CappedClock capped_clock(const GpuSpec& gpu, double utilization, double boost_compute_s, Precision precision) {
  CappedClock c;
  c.duration_s = boost_compute_s;
  if (!models_power_cap(gpu)) return c;
  const double u = std::clamp(utilization, 0.0, 1.0);
  const double dynamic_w = (gpu.tensor_boost_w - gpu.idle_w) * tensor_power_weight(gpu, precision) * u;
  const double headroom_w = std::max(0.0, tensor_power_budget_w(gpu) - gpu.idle_w);
  if (dynamic_w > headroom_w) c.sustained_fraction = std::pow(headroom_w / dynamic_w, 1.0 / gpu.clock_power_exponent);
  // At the cap the power is the budget itself (not P(u, phi_cap) through the root and the power, which
  // rounds a few ulps above it).
  c.sustained_power_w =
      dynamic_w > headroom_w ? gpu.idle_w + headroom_w : tensor_power_w(gpu, u, c.sustained_fraction, precision);
  c.duration_s = throttled_duration_s(boost_compute_s, c.sustained_fraction, gpu.power_response_s);
  c.mean_fraction = c.duration_s > 0.0 ? boost_compute_s / c.duration_s : 1.0;
  return c;
}

}  // namespace clustersim
