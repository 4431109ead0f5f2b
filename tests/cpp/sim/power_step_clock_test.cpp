// The clock of a step's tensor kernels set by the step's mean power (sim/power/step_clock.cpp): the
// budget's closed form, a GEMM loop at the sustained clock (the calibration measurements unchanged),
// a step with idle time between the sustained and the boost clock at the model's fixed point, and
// the whole flow: the report's clock and an energy that stays within the TDP.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/hardware/power_capped_clock.hpp"
#include "sim/power/power_catalogue.hpp"
#include "sim/power/step_clock.hpp"
#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {
namespace {

// idle 70 W, TDP 700 W, a fully busy tensor path would draw 1500 W at the boost clock, P ~ f^3; no
// transient (tau = 0): a kernel runs at the sustained clock of its budget.
GpuSpec capped_gpu() {
  GpuSpec g = find_gpu("h100-sxm5-80gb", "test", "");
  g.idle_w = 70.0;
  g.tdp_w = 700.0;
  g.tensor_boost_w = 1500.0;
  g.clock_power_exponent = 3.0;
  g.power_response_s = 0.0;
  g.gemm_max_efficiency = 0.8;
  return g;
}

// The sustained clock of a large GEMM (u = 0.8) under budget B, / boost: cbrt((B - 70) / (1430 x 0.8)).
double closed_form_clock(double budget_w) {
  return std::min(1.0, std::cbrt((budget_w - 70.0) / (1430.0 * 0.8)));
}

// One GPU class, a step of `tensor_s` of tensor kernels and `waiting_s` of waiting.
PowerInputs step_of(const GpuSpec& g, double tensor_s, double waiting_s) {
  PowerInputs in;
  in.step_time_s = tensor_s + waiting_s;
  in.gpu = gpu_power_model(g);
  in.classes = {{"gpu", 8, tensor_s, 0.0, 0.0, 0.0}};
  return in;
}

TEST(StepClock, BudgetIsTheTdpLessWhatTheRestOfTheStepDraws) {
  const GpuPowerModel p{.id = "hand-worked",
                        .tdp_w = 700,
                        .waiting_w = 110,
                        .tensor_w = 700,
                        .vector_w = 450,
                        .communication_w = 250,
                        .overlap_communication_w = 60,
                        .source = "this test"};
  // Duty cycle d = 0.6, the rest waiting at 110 W: B = (700 - 0.4 x 110) / 0.6.
  EXPECT_NEAR(step_tensor_budget_w(p, gpu_activity(0.6, 0.0, 0.0, 0.0, 1.0)), (700.0 - 0.4 * 110.0) / 0.6, 1e-9);
  // B = 700 + sum (700 - P_j) s_j / t: vector 0.2 s at 450 W, exposed communication 0.1 s at 250 W,
  // waiting 0.2 s at 110 W; the collective overlapping compute for 0.1 s adds 60 W on the vector share
  // of it (0.2 / 0.7; gpu_energy.hpp spreads it over tensor and vector time, none on the tensor part).
  const GpuActivity a = gpu_activity(0.5, 0.2, 0.2, 0.1, 1.0);
  EXPECT_NEAR(step_tensor_budget_w(p, a),
              700.0 + (250.0 * 0.2 + 450.0 * 0.1 + 590.0 * 0.2 - 60.0 * (0.2 / 0.7) * 0.1) / 0.5, 1e-9);
  // A step of tensor kernels only (a GEMM loop): the TDP. No tensor time: no bound.
  EXPECT_NEAR(step_tensor_budget_w(p, gpu_activity(1.0, 0.0, 0.0, 0.0, 1.0)), 700.0, 1e-9);
  EXPECT_TRUE(std::isinf(step_tensor_budget_w(p, gpu_activity(0.0, 0.5, 0.0, 0.0, 1.0))));
  // The busiest class sets the step's budget.
  PowerInputs in;
  in.step_time_s = 1.0;
  in.gpu = p;
  in.classes = {{"light", 4, 0.3, 0.0, 0.0, 0.0}, {"busy", 4, 0.9, 0.0, 0.0, 0.0}, {"idle", 4, 0.0, 0.0, 0.0, 0.0}};
  std::size_t limiting = 99;
  EXPECT_NEAR(least_step_tensor_budget_w(in, &limiting), (700.0 - 0.1 * 110.0) / 0.9, 1e-9);
  EXPECT_EQ(limiting, 1u);
}

TEST(StepClock, GemmLoopRunsAtTheSustainedClockAsTheCalibrationMeasurements) {
  GpuSpec g = capped_gpu();
  const ComputeOp op = testing::gemm(16384, 16384, 16384);
  const double loop_kernel_s = kernel_time(g, op).time_s;
  int runs = 0;
  const StepClock c = solve_step_clock(g, [&](const GpuSpec& gpu) {
    ++runs;
    return step_of(gpu, 20 * kernel_time(gpu, op).time_s, 0.0);
  });
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(c.replays, 1);
  EXPECT_NEAR(c.tensor_power_budget_w, 700.0, 1e-9);
  EXPECT_NEAR(c.tensor_duty_cycle, 1.0, 1e-12);
  // The sustained clock: cbrt(630 / (1430 x 0.8)) of 1830 MHz.
  EXPECT_NEAR(c.gemm_clock_MHz, std::cbrt(630.0 / 1144.0) * 1830.0, 1e-9);
  EXPECT_NEAR(c.sustained_gemm_clock_MHz, c.gemm_clock_MHz, 1e-12);
  // The GEMM's time is the one the kernel model gives without a step (the calibration measurements).
  EXPECT_DOUBLE_EQ(kernel_time(g, op).time_s, loop_kernel_s);
}

// A GPU run below its catalogue TDP (a cluster spec's tdp_W: torchtitan's H100s at 500 W) is held to
// that limit: the power model's TDP is the spec's, no activity draws more, and a GEMM loop runs at
// the sustained clock of 500 W, cbrt(430 / (1430 x 0.8)) of 1830 MHz (it used to take the 700 W of
// the power catalogue: cbrt(630 / 1144), 15 % faster).
TEST(StepClock, PowerLimitBelowTheCatalogueTdpHoldsTheGpuToIt) {
  GpuSpec g = capped_gpu();
  g.tdp_w = 500.0;
  const GpuPowerModel p = gpu_power_model(g);
  EXPECT_DOUBLE_EQ(p.tdp_w, 500.0);
  for (double w : {p.waiting_w, p.tensor_w, p.vector_w, p.communication_w})
    EXPECT_LE(w, 500.0);
  EXPECT_NE(p.source.find("power limit 500 W"), std::string::npos) << p.source;
  const ComputeOp op = testing::gemm(16384, 16384, 16384);
  PowerInputs last;
  const StepClock c = solve_step_clock(g, [&](const GpuSpec& gpu) {
    last = step_of(gpu, 20 * kernel_time(gpu, op).time_s, 0.0);
    return last;
  });
  EXPECT_NEAR(c.tensor_power_budget_w, 500.0, 1e-9);
  EXPECT_NEAR(c.gemm_clock_MHz, std::cbrt(430.0 / 1144.0) * 1830.0, 1e-9);
  EXPECT_LE(compute_power(last).gpu_avg_w, 500.0 + 1e-9);
  // The catalogue's own TDP leaves the figures as the catalogue gives them.
  EXPECT_DOUBLE_EQ(gpu_power_model(capped_gpu()).tdp_w, 700.0);
  EXPECT_DOUBLE_EQ(gpu_power_model(capped_gpu()).vector_w, 450.0);
}

// A step whose tensor kernels take t_b seconds at the boost clock, then wait o seconds at 110 W
// (tau = 0: tensor time t_b / phi). The model's fixed point: phi^3 = (B(phi) - 70) / (1430 x 0.8) with
// B(phi) = 700 + (700 - 110) o phi / t_b, solved here by bisection.
TEST(StepClock, StepWithIdleTimeRunsBetweenTheSustainedAndTheBoostClock) {
  const double t_b = 0.6;
  for (double o : {0.05, 0.2, 0.5}) {
    GpuSpec g = capped_gpu();
    PowerInputs last;
    const StepClock c = solve_step_clock(g, [&](const GpuSpec& gpu) {
      const double phi = capped_clock(gpu, 0.8, 1.0).sustained_fraction;
      last = step_of(gpu, t_b / phi, o);
      return last;
    });
    double lo = closed_form_clock(700.0), hi = 1.0;
    for (int i = 0; i < 200; ++i) {
      const double mid = 0.5 * (lo + hi);
      (closed_form_clock(700.0 + 590.0 * o * mid / t_b) > mid ? lo : hi) = mid;
    }
    const double sustained = closed_form_clock(700.0);
    EXPECT_TRUE(c.converged) << o;
    EXPECT_GT(c.replays, 1) << o;
    EXPECT_GT(c.gemm_clock_MHz, sustained * 1830.0 * 1.01) << o;
    EXPECT_LT(c.gemm_clock_MHz, 1830.0) << o;
    // Within the solver's tolerance (0.1 % of the boost clock per run) of the fixed point.
    EXPECT_NEAR(c.gemm_clock_MHz / 1830.0, lo, 2e-3) << o;
    // The clock and the budget agree, and the step kept ran at that clock.
    EXPECT_NEAR(c.gemm_clock_MHz / 1830.0, closed_form_clock(c.tensor_power_budget_w), 1e-12) << o;
    EXPECT_NEAR(last.classes[0].tensor_s, t_b / (c.gemm_clock_MHz / 1830.0), 1e-12) << o;
    EXPECT_NEAR(c.tensor_duty_cycle, last.classes[0].tensor_s / last.step_time_s, 1e-12) << o;
    // Energy = power x time at that clock: the step's mean power is the TDP, within the tolerance
    // (never above it: the sequence of budgets rises to the fixed point).
    const PowerStats s = compute_power(last);
    const double tensor_w = tensor_power_w(g, 0.8, c.gemm_clock_MHz / 1830.0);
    EXPECT_NEAR(s.gpu_avg_w, (tensor_w * last.classes[0].tensor_s + 110.0 * o) / last.step_time_s, 1e-9) << o;
    EXPECT_LE(s.gpu_avg_w, 700.0 + 1e-9) << o;
    EXPECT_GT(s.gpu_avg_w, 700.0 * 0.99) << o;
  }
  // A step mostly waiting leaves enough for the boost clock: B >= 70 + 1430 x 0.8 = 1214 W.
  GpuSpec g = capped_gpu();
  const StepClock light = solve_step_clock(
      g, [&](const GpuSpec& gpu) { return step_of(gpu, t_b / capped_clock(gpu, 0.8, 1.0).sustained_fraction, 5.0); });
  EXPECT_NEAR(light.gemm_clock_MHz, 1830.0, 1e-9);
  EXPECT_GE(light.tensor_power_budget_w, 1214.0);
}

TEST(StepClock, GpuWithoutThePowerCapModelRunsOnceAtTheBoostClock) {
  GpuSpec g = capped_gpu();
  g.id = "inline-gpu";  // no power catalogue entry: figures derived from its TDP
  g.tensor_boost_w = 0.0;
  int runs = 0;
  const StepClock c = solve_step_clock(g, [&](const GpuSpec& gpu) {
    ++runs;
    return step_of(gpu, 0.5, 0.5);
  });
  EXPECT_EQ(runs, 1);
  EXPECT_NEAR(c.gemm_clock_MHz, 1830.0, 1e-9);
  EXPECT_FALSE(c.basis.empty());
  EXPECT_FALSE(c.cap_modelled);
  // The report says so in its summary, with the cap it did not apply.
  Report r;
  r.power = PowerStats{};
  r.power->clock_cap_modelled = c.cap_modelled;
  r.power->tensor_power_budget_w = c.tensor_power_budget_w;
  EXPECT_NE(r.to_text().find("GPU clock          the boost clock for every kernel: this GPU's entry does not model the "
                             "clock under its 700 W cap"),
            std::string::npos)
      << r.to_text();
}

// The whole flow on the shipped H100: the report names the clock, between the sustained GEMM clock
// and the boost clock, and every GPU's mean power stays within its TDP.
TEST(StepClock, SimulatedStepReportsItsClockAndStaysWithinTheTdp) {
  const ClusterSpec spec = testing::fat_tree_spec(1, 8, 8);
  WorkloadSpec w = load_workload_spec("gpt3-1.3b");
  w.training.global_batch = 16;
  w.training.micro_batch = 1;
  SimulationOptions options;
  options.fidelity = "analytical";
  const Report r = simulate(spec, w, options);
  ASSERT_TRUE(r.power.has_value());
  GpuSpec g = find_gpu("h100-sxm5-80gb", "test", "");
  apply_calibration_profile(g);
  const double sustained_MHz = capped_clock(g, g.gemm_max_efficiency, 1.0).sustained_fraction * 1830.0;
  EXPECT_GT(r.power->gemm_clock_MHz, sustained_MHz);
  EXPECT_LE(r.power->gemm_clock_MHz, 1830.0 + 1e-9);
  EXPECT_GT(r.power->tensor_power_budget_w, 700.0);
  EXPECT_GT(r.power->tensor_duty_cycle, 0.0);
  EXPECT_LT(r.power->tensor_duty_cycle, 1.0);
  EXPECT_NE(r.power->clock_basis.find("step-averaged power"), std::string::npos);
  EXPECT_TRUE(r.power->clock_cap_modelled);
  EXPECT_EQ(r.to_text().find("the boost clock for every kernel"), std::string::npos);
  for (const GpuClassEnergy& c : r.power->gpu_classes)
    EXPECT_LE(c.avg_w_per_gpu, 700.0 + 1e-6) << c.name;
  // The report's JSON carries the clock and reads back.
  const Report back = Report::from_json(r.to_json());
  EXPECT_DOUBLE_EQ(back.power->gemm_clock_MHz, r.power->gemm_clock_MHz);
  EXPECT_EQ(back.power->clock_basis, r.power->clock_basis);
  EXPECT_EQ(back.power->clock_cap_modelled, true);
}

}  // namespace
}  // namespace clustersim
