// The clock of a step's tensor-core kernels under the power cap. SI units (W, s, J); clocks as
// fractions of the boost clock where not named _MHz.
//
// The GPU's power controller holds the power averaged over a window at the TDP, not each kernel's:
// NVML reports the power of Ampere (except GA100) and newer GPUs averaged over 1 s
// (nvmlDeviceGetPowerUsage), the reading the power limit is enforced on. A training step repeats, so
// over whole steps the mean power is the step's. One GPU's step of length T spends t_tensor in
// tensor-core kernels and the rest in memory-bound kernels, communication and waiting, energy
// E_rest at the powers of gpu_energy.hpp. With the step's mean at the TDP the tensor kernels may draw
//   B = (tdp_w T - E_rest) / t_tensor = tdp_w + sum over the other activities j of (tdp_w - P_j) s_j / t_tensor
// (>= tdp_w: no other activity draws more than the TDP), and run at the clock power_capped_clock.cpp
// gives for that budget: P(u, phi) = min(P(u, 1), B). For a step of tensor kernels only (a GEMM loop,
// the calibration measurements) B = tdp_w: the sustained clock. A step with duty cycle
// d = t_tensor / T and the rest at mean power P_rest leaves B = (tdp_w - (1 - d) P_rest) / d.
//
// T, t_tensor and E_rest depend on the clock. The step is run at B_0 = tdp_w, then at
// B_{k+1} = min over the GPU classes of B(step run at B_k) (the busiest GPU sets the clock: every
// GPU's mean power stays within its TDP), capped at tensor_boost_w (where no load throttles). A
// faster clock shortens t_tensor and raises B, so the sequence rises from tdp_w to the least fixed
// point; it stops when a large GEMM's clock (the tensor cores busy gemm_max_efficiency of the
// cycles) moves by less than kClockTolerance of the boost clock, after at most kMaxRuns runs.
// The step kept is the last one run, at the budget B_k its kernels used, so its energy and clock
// agree: the mean power is tdp_w x (1 - O(tolerance)) when the cap binds.
// Not modelled: phases of a step longer than the controller's window (a step of several seconds
// with its optimizer and gradient reduction at the end) are averaged over the whole step.
#include "sim/power/step_clock.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/hardware/power_capped_clock.hpp"

namespace clustersim {
namespace {

constexpr double kClockTolerance = 1e-3;  // of the boost clock
constexpr int kMaxRuns = 8;

// The clock a large GEMM settles at under the GPU's budget, / boost clock.
double gemm_clock_fraction(const GpuSpec& gpu) {
  return capped_clock(gpu, gpu.gemm_max_efficiency, 1.0).sustained_fraction;
}

std::string describe(const StepClock& c, const std::string& limiting_class, double tdp_w) {
  char buf[640];
  if (c.tensor_duty_cycle <= 0.0) {
    std::snprintf(buf, sizeof buf,
                  "step-averaged power: no tensor-core work in the step; the clock of a sustained large GEMM "
                  "under the %.0f W TDP would be %.0f MHz (boost %.0f MHz)",
                  tdp_w, c.sustained_gemm_clock_MHz, c.boost_clock_MHz);
    return buf;
  }
  std::snprintf(buf, sizeof buf,
                "step-averaged power (sim/power/step_clock.cpp): the GPU's mean power over the step held at most "
                "at its %.0f W TDP; tensor-core kernels run %.1f %% of the step of GPU class '%s' and may draw "
                "%.0f W while they run: large GEMMs at %.0f MHz (a sustained GEMM loop: %.0f MHz; boost %.0f MHz); "
                "%d run%s of the step%s",
                tdp_w, 100.0 * c.tensor_duty_cycle, limiting_class.c_str(), c.tensor_power_budget_w, c.gemm_clock_MHz,
                c.sustained_gemm_clock_MHz, c.boost_clock_MHz, c.replays, c.replays == 1 ? "" : "s",
                c.converged ? "" : " (not settled: the clock still moved by more than 0.1 % of boost)");
  return buf;
}

}  // namespace

double step_tensor_budget_w(const GpuPowerModel& power, const GpuActivity& a) {
  if (a.tensor_s <= 0.0) return std::numeric_limits<double>::infinity();
  const double step_s = a.tensor_s + a.vector_s + a.exposed_communication_s + a.waiting_s;
  // The rest of the step's energy: the tensor kernels at the TDP leave no room for an overlapped
  // collective's increment on them (gpu_energy.cpp caps compute plus overlap at the TDP).
  GpuPowerModel at_tdp = power;
  at_tdp.tensor_w = at_tdp.low_precision_tensor_w = power.tdp_w;
  const double rest_j = gpu_energy_j(at_tdp, a) - power.tdp_w * a.tensor_s;
  return std::max(power.tdp_w, (power.tdp_w * step_s - rest_j) / a.tensor_s);
}

double least_step_tensor_budget_w(const PowerInputs& step, std::size_t* limiting_class) {
  double least = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < step.classes.size(); ++i) {
    const RankClassActivity& c = step.classes[i];
    if (c.ranks <= 0) continue;
    const GpuActivity a = gpu_activity(c.tensor_s, c.vector_s, c.communication_s, c.exposed_communication_s,
                                       step.step_time_s, c.low_precision_tensor_s);
    const double b = step_tensor_budget_w(step.gpu, a);
    if (b < least) {
      least = b;
      if (limiting_class != nullptr) *limiting_class = i;
    }
  }
  return least;
}

StepClock solve_step_clock(GpuSpec& gpu, const std::function<PowerInputs(const GpuSpec&)>& run_step) {
  StepClock c;
  c.boost_clock_MHz = gpu.boost_clock_hz / 1e6;
  gpu.tensor_power_budget_w = 0.0;
  PowerInputs step = run_step(gpu);
  if (!models_power_cap(gpu)) {
    c.tensor_power_budget_w = gpu.tdp_w;
    c.gemm_clock_MHz = c.sustained_gemm_clock_MHz = c.boost_clock_MHz;
    c.basis = "boost clock: the GPU's catalogue entry does not model the clock under the power cap (tensor_boost_W)";
    return c;
  }
  c.cap_modelled = true;
  c.cap_prior = power_cap_is_prior(gpu);
  c.sustained_gemm_clock_MHz = gemm_clock_fraction(gpu) * c.boost_clock_MHz;
  std::size_t limiting = 0;
  for (;;) {
    limiting = 0;
    const double next_w = std::min(least_step_tensor_budget_w(step, &limiting), gpu.tensor_boost_w);
    if (!std::isfinite(next_w)) break;  // no tensor time: the budget does not matter
    GpuSpec next = gpu;
    next.tensor_power_budget_w = next_w;
    if (std::fabs(gemm_clock_fraction(next) - gemm_clock_fraction(gpu)) < kClockTolerance) break;
    if (c.replays >= kMaxRuns) {
      c.converged = false;
      break;
    }
    gpu.tensor_power_budget_w = next_w;
    step = run_step(gpu);
    ++c.replays;
  }
  c.tensor_power_budget_w = tensor_power_budget_w(gpu);
  c.gemm_clock_MHz = gemm_clock_fraction(gpu) * c.boost_clock_MHz;
  std::string name;
  if (limiting < step.classes.size() && step.classes[limiting].tensor_s > 0.0 && step.step_time_s > 0.0) {
    c.tensor_duty_cycle = std::min(1.0, step.classes[limiting].tensor_s / step.step_time_s);
    name = step.classes[limiting].name;
  }
  c.basis = describe(c, name, gpu.tdp_w);
  return c;
}

}  // namespace clustersim
