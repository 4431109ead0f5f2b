#pragma once
// The clock of a step's tensor-core kernels under the power cap, set by the power averaged over the
// step (docs/power_and_cost.md, "The clock under the power cap"). Equations at the top of
// step_clock.cpp.
#include <cstddef>
#include <functional>
#include <string>

#include "sim/hardware/gpu_spec.hpp"
#include "sim/power/gpu_energy.hpp"
#include "sim/power/power_model.hpp"

namespace clustersim {

struct StepClock {
  double tensor_power_budget_w = 0.0;     // what the tensor kernels may draw while they run (W)
  double gemm_clock_MHz = 0.0;            // the clock a large GEMM settles at under that budget
  double sustained_gemm_clock_MHz = 0.0;  // the same with the TDP as budget (a GEMM loop)
  double boost_clock_MHz = 0.0;
  double tensor_duty_cycle = 0.0;  // tensor time / step time of the GPU class that sets the budget
  int replays = 1;                 // replays of the step until the clock settled
  bool cap_modelled = false;       // false: the GPU's entry has no clock under the cap (tensor_boost_W)
  bool cap_prior = false;          // the clock under the cap rests on a prior (power_cap_is_prior)
  bool converged = true;
  std::string basis;  // how the clock was set, in words
};

// The budget one GPU's step leaves its tensor kernels: (tdp_w T - E_rest) / tensor_s, with E_rest
// the energy of everything else in the step (gpu_energy.hpp); never below tdp_w. +infinity for a
// step without tensor time.
double step_tensor_budget_w(const GpuPowerModel& power, const GpuActivity& activity);

// The least budget over the GPU classes of a step (every GPU's mean power within its TDP); +infinity
// when no class has tensor time. `limiting_class`, when given, receives the index of that class.
double least_step_tensor_budget_w(const PowerInputs& step, std::size_t* limiting_class = nullptr);

// Runs the step at the budget of the sustained load (the TDP), then at the budget each run leaves,
// until a large GEMM's clock moves by less than 0.1 % of the boost clock. `run_step` simulates the
// step on the GPU it is given and returns the step's power inputs. On return `gpu` carries the budget
// of the last run (GpuSpec::tensor_power_budget_w), the one the last step's kernel times used. A GPU
// without a power-cap model (power_capped_clock.hpp) runs once, at the boost clock.
StepClock solve_step_clock(GpuSpec& gpu, const std::function<PowerInputs(const GpuSpec&)>& run_step);

}  // namespace clustersim
