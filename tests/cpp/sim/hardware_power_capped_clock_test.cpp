// The clock of tensor-core kernels under the power cap (sim/hardware/power_capped_clock.cpp): the
// closed forms of the sustained clock and of a kernel's duration, the shipped H100 profile against
// the measured H100 (calibration/power_cap/h100-device-gemm.json: two figures fitted, one held out), and the
// power model agreeing with the clock (a sustained GEMM draws at most the TDP, exactly the power the
// clock model gives it).
#include <cmath>

#include <gtest/gtest.h>

#include "../calibrated_gpu.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/hardware/power_capped_clock.hpp"
#include "sim/power/gpu_energy.hpp"
#include "sim/power/power_catalogue.hpp"
#include "sim/power/power_model.hpp"
#include "sim_test_support.hpp"

namespace clustersim {
namespace {

// idle 70 W, TDP 700 W, a fully busy tensor path would draw 1500 W at the boost clock, P ~ f^3.
GpuSpec capped_gpu(double response_s) {
  GpuSpec g = find_gpu("h100-sxm5-80gb", "test", "");
  g.idle_w = 70.0;
  g.tdp_w = 700.0;
  g.tensor_boost_w = 1500.0;
  g.clock_power_exponent = 3.0;
  g.power_response_s = response_s;
  return g;
}

using testing::gemm;

double tflops(const GpuSpec& g, const ComputeOp& op) {
  return op.flops / kernel_time(g, op).time_s / 1e12;
}

TEST(PowerCappedClock, SustainedClockHoldsThePowerAtTheTdp) {
  const GpuSpec g = capped_gpu(0.0);
  // u = 1: 70 + 1430 W at the boost clock; the cap allows phi^3 = 630 / 1430.
  const CappedClock full = capped_clock(g, 1.0, 1e-3);
  EXPECT_NEAR(full.sustained_fraction, std::cbrt(630.0 / 1430.0), 1e-12);
  EXPECT_NEAR(full.sustained_power_w, 700.0, 1e-9);
  // tau = 0: the whole kernel runs at the sustained clock.
  EXPECT_NEAR(full.duration_s, 1e-3 / std::cbrt(630.0 / 1430.0), 1e-15);
  EXPECT_NEAR(full.mean_fraction, full.sustained_fraction, 1e-12);
  // u = 0.8: phi^3 = 630 / (1430 x 0.8).
  EXPECT_NEAR(capped_clock(g, 0.8, 1e-3).sustained_fraction, std::cbrt(630.0 / 1144.0), 1e-12);
  // u = 0.4: 70 + 572 = 642 W < 700 W: no throttling, the kernel draws 642 W.
  const CappedClock light = capped_clock(g, 0.4, 1e-3);
  EXPECT_DOUBLE_EQ(light.sustained_fraction, 1.0);
  EXPECT_DOUBLE_EQ(light.duration_s, 1e-3);
  EXPECT_NEAR(light.sustained_power_w, 642.0, 1e-9);
  // The threshold: u = 630 / 1430 is the busiest load the cap lets run at the boost clock.
  EXPECT_DOUBLE_EQ(capped_clock(g, 630.0 / 1430.0, 1e-3).sustained_fraction, 1.0);
  EXPECT_LT(capped_clock(g, 630.0 / 1430.0 + 1e-6, 1e-3).sustained_fraction, 1.0);
}

TEST(PowerCappedClock, KernelStartsAtBoostAndSettlesWithTheControllersTimeConstant) {
  const double tau = 1e-3;
  const GpuSpec g = capped_gpu(tau);
  const double phi = std::cbrt(630.0 / 1430.0);
  for (double t_b : {1e-5, 1e-4, 1e-3, 1e-2, 1e-1}) {
    const CappedClock c = capped_clock(g, 1.0, t_b);
    const double t = c.duration_s;
    // The cycles done over T at phi(t) = phi + (1 - phi) e^(-t / tau) are the boost-clock cycles.
    EXPECT_NEAR(phi * t + (1.0 - phi) * tau * (1.0 - std::exp(-t / tau)), t_b, 1e-12 * t_b) << t_b;
    EXPECT_GT(t, t_b);
    EXPECT_LT(t, t_b / phi);
    EXPECT_NEAR(c.mean_fraction, t_b / t, 1e-12);
  }
  // A kernel much shorter than tau runs at the boost clock; one much longer at the sustained clock,
  // late by the cycles of the transient: T = (t_b - (1 - phi) tau) / phi.
  EXPECT_NEAR(capped_clock(g, 1.0, 1e-6).mean_fraction, 1.0, 1e-3);
  EXPECT_NEAR(capped_clock(g, 1.0, 1.0).duration_s, (1.0 - (1.0 - phi) * tau) / phi, 1e-12);
}

TEST(PowerCappedClock, GpuWithoutTheModelKeepsTheBoostClock) {
  GpuSpec g = capped_gpu(1e-3);
  g.tensor_boost_w = 0.0;
  EXPECT_FALSE(models_power_cap(g));
  const CappedClock c = capped_clock(g, 1.0, 1e-3);
  EXPECT_DOUBLE_EQ(c.duration_s, 1e-3);
  EXPECT_DOUBLE_EQ(c.mean_fraction, 1.0);
}

TEST(PowerCappedClock, KernelModelRunsTheComputeTermAtTheCappedClock) {
  // 8192^3 bf16 is compute bound: the compute term at the boost clock (the kernel model without the
  // cap) stretched to the duration of capped_clock, the launch and the epilogue unchanged.
  GpuSpec boost = capped_gpu(1e-3);
  boost.tensor_boost_w = 0.0;
  const GpuSpec capped = capped_gpu(1e-3);
  const ComputeOp op = gemm(8192, 8192, 8192);
  const double epilogue_s = 8192.0 * 8192.0 * 2.0 / (capped.hbm_bandwidth_Bps * capped.gemm_memory_efficiency);
  const double compute_boost_s = kernel_time(boost, op).time_s - capped.gemm_launch_s - epilogue_s;
  const double u = op.flops / (capped.peak_flops(Precision::bf16) * compute_boost_s);
  EXPECT_NEAR(kernel_time(capped, op).time_s,
              capped.gemm_launch_s + capped_clock(capped, u, compute_boost_s).duration_s + epilogue_s, 1e-12);
  // 1.49 ms of main loop at the boost clock, tau = 1 ms: the mean clock is ~0.92 of boost.
  EXPECT_GT(kernel_time(capped, op).time_s, kernel_time(boost, op).time_s * 1.05);
  // A small GEMM (tensor cores mostly idle, memory bound) is not throttled.
  const ComputeOp small = gemm(16, 4096, 4096);
  EXPECT_DOUBLE_EQ(kernel_time(capped, small).time_s, kernel_time(boost, small).time_s);
}

// The shipped H100 profile against the measured H100 (calibration/power_cap/h100-device-gemm.json):
// bf16 8192^3 725 and 16384^3 626 TFLOP/s, the two sustained loads its tensor_boost_W is fitted on
// (the shape parameters come from Vidur's Llama-2-7B operator times), and fp16 8192^3 702, held out.
// Tolerance: 5 % each (the fit leaves 0.5 % and 0.7 % on the two bf16 figures).
TEST(PowerCappedClock, ShippedH100ProfileMatchesTheMeasuredSustainedGemms) {
  GpuSpec g = testing::calibrated_gpu("h100-sxm5-80gb");
  ASSERT_TRUE(models_power_cap(g));
  EXPECT_NEAR(tflops(g, gemm(8192, 8192, 8192)), 725.0, 0.05 * 725.0);
  EXPECT_NEAR(tflops(g, gemm(16384, 16384, 16384)), 626.0, 0.05 * 626.0);
  ComputeOp fp16 = gemm(8192, 8192, 8192);
  fp16.precision = Precision::fp16;
  EXPECT_NEAR(tflops(g, fp16), 702.0, 0.05 * 702.0);
  // The larger GEMM runs slower: it spends more of its time at the sustained clock.
  EXPECT_LT(tflops(g, gemm(16384, 16384, 16384)), tflops(g, gemm(8192, 8192, 8192)));
}

// An fp8 GEMM C[m x n] = A[m x k] B[k x n]: fp8 operands (1 byte), bf16 output (Transformer Engine).
ComputeOp gemm_fp8(std::uint32_t m, std::uint32_t n, std::uint32_t k) {
  ComputeOp op = gemm(m, n, k);
  op.precision = Precision::fp8;
  op.bytes = double(m) * k + double(k) * n + double(m) * n * 2.0;
  return op;
}

// One measured H200 (calibration/data/device/h200-2026-11-28/gemm_sweep.json, cuBLASLt, sustained loops
// of ~0.2 s under the 700 W cap): bf16 8192^3 691 and 16384^3 639 TFLOP/s, fp16 8192^3 660, fp8 8192^3
// 1259 and 16384^3 1232.
struct H200Gemms {
  double bf16_8k, bf16_16k, fp16_8k, fp8_8k, fp8_16k;
};
constexpr H200Gemms kMeasuredH200{691.0, 639.0, 660.0, 1259.0, 1232.0};

// The model's figures `t` against the measured H200's: each within its `tolerance` x the measured figure
// of the measured figure x its `ratio` (the model's stated error, 1 + e).
void expect_against_measured_h200(const H200Gemms& t, const H200Gemms& ratio, const H200Gemms& tolerance) {
  const H200Gemms& m = kMeasuredH200;
  EXPECT_NEAR(t.bf16_8k, m.bf16_8k * ratio.bf16_8k, tolerance.bf16_8k * m.bf16_8k);
  EXPECT_NEAR(t.bf16_16k, m.bf16_16k * ratio.bf16_16k, tolerance.bf16_16k * m.bf16_16k);
  EXPECT_NEAR(t.fp16_8k, m.fp16_8k * ratio.fp16_8k, tolerance.fp16_8k * m.fp16_8k);
  EXPECT_NEAR(t.fp8_8k, m.fp8_8k * ratio.fp8_8k, tolerance.fp8_8k * m.fp8_8k);
  EXPECT_NEAR(t.fp8_16k, m.fp8_16k * ratio.fp8_16k, tolerance.fp8_16k * m.fp8_16k);
}

H200Gemms h200_gemms(const GpuSpec& g) {
  ComputeOp fp16 = gemm(8192, 8192, 8192);
  fp16.precision = Precision::fp16;
  return {tflops(g, gemm(8192, 8192, 8192)), tflops(g, gemm(16384, 16384, 16384)), tflops(g, fp16),
          tflops(g, gemm_fp8(8192, 8192, 8192)), tflops(g, gemm_fp8(16384, 16384, 16384))};
}

// Before any H200 measurement: the catalogue entry alone, whose clock under the cap is the H100
// profile's (same GH100 SMs, same 700 W cap; sim/hardware/catalogue/h200-sxm-141gb.json). bf16 comes
// out at +4.0 % and -2.2 %. The misses are the known ones: the model runs fp16 at bf16's power, where
// the measured fp16 ran 4.5 % below bf16 (3 % on the measured H100: random fp16 operands toggle more
// mantissa bits), and fp8 is taken not to throttle at 700 W (tensor_fp8_power_ratio, derived from
// Azure's H100 table whose rates rise with size), where this H200's 16384^3 ran 2 % below its 8192^3:
// +8.9 %, +8.5 % and +15.6 %.
TEST(PowerCappedClock, H200CatalogueEntryPredictsTheMeasuredH200BeforeAnyH200Fit) {
  const GpuSpec g = find_gpu("h200-sxm-141gb", "test", "");
  ASSERT_TRUE(models_power_cap(g));
  expect_against_measured_h200(h200_gemms(g), {1.0, 1.0, 1.089, 1.085, 1.156}, {0.05, 0.05, 0.01, 0.01, 0.01});
}

// After: the shipped H200 profile (calibration/profiles/h200-sxm-141gb.json) is fitted to the sweep's
// 126 16-bit and tf32 GEMMs (median error 8.4 %, 3.8 % for the clock family) and, for fp8, to Azure's
// published ND H200 v5 table (micro-0038..0046: 8192^3 1300.6, 16384^3 1366.3 TFLOP/s). The 16-bit
// points: -2.5, +7.9 and +2.1 %; the fit trades the largest square (whose long kernel settles to the
// sustained clock; fitted power_response_us 57 us) for the projection shapes of 512 to 8192 tokens
// that training steps run: it predicts the held-out H200 training steps at MAPE 4.6 %, where the
// catalogue entry alone gives 6.9 % (validate h200-device, docs/validation.md). fp8: +6.9 and +7.9 %
// of Azure's two figures (the fit's median over its 9 shapes, 1024^3 to 802816 x 16384 x 4096, is
// 7.7 %), and +10.5 / +19.6 % on this GPU's own fp8 sweep, held out: it throttled its fp8 GEMMs
// (16384^3 below 8192^3) where Azure's did not.
TEST(PowerCappedClock, ShippedH200ProfileMatchesItsMeasuredSustainedGemms) {
  GpuSpec g = testing::calibrated_gpu("h200-sxm-141gb");
  const H200Gemms t = h200_gemms(g);
  expect_against_measured_h200(t, {0.975, 1.079, 1.021, 1.105, 1.196}, {0.01, 0.01, 0.01, 0.01, 0.01});
  EXPECT_NEAR(t.fp8_8k, 1300.6 * 1.069, 0.01 * 1300.6);  // Azure's
  EXPECT_NEAR(t.fp8_16k, 1366.3 * 1.079, 0.01 * 1366.3);
}

TEST(PowerCappedClock, PowerModelAgreesWithTheClock) {
  GpuSpec g = testing::calibrated_gpu("h100-sxm5-80gb");
  const GpuPowerModel p = gpu_power_model(g);
  // A sustained large GEMM (tensor cores busy gemm_max_efficiency of the cycles) throttles: it draws
  // exactly the TDP, the power of the clock model at the sustained clock.
  const CappedClock c = capped_clock(g, g.gemm_max_efficiency, 1.0);
  ASSERT_LT(c.sustained_fraction, 1.0);
  EXPECT_NEAR(p.tensor_w, p.tdp_w, 1e-9);
  EXPECT_NEAR(p.tensor_w, tensor_power_w(g, g.gemm_max_efficiency, c.sustained_fraction), 1e-9);
  // A step of nothing but tensor kernels under overlapped communication stays within the TDP.
  PowerInputs in;
  in.step_time_s = 1.0;
  in.gpu = p;
  in.classes = {{"gemm", 8, 1.0, 0.0, 1.0, 0.0}};
  const PowerStats s = compute_power(in);
  EXPECT_LE(s.gpu_avg_w, p.tdp_w + 1e-9);
  EXPECT_NEAR(s.gpu_avg_w, p.tdp_w, 1e-9);
}

// One rule for every precision: P = idle + (boost - idle) w(p) u phi^3, w(bf16) = 1,
// w(fp8) = tensor_fp8_power_ratio. Hand-worked with idle 70 W, boost 1500 W (1430 W dynamic),
// w(fp8) = 0.6, the tensor cores busy u = 0.75 of the cycles, at 700 W and at 500 W.
TEST(PowerCappedClock, Fp8AndBf16SustainedClocksAt700And500W) {
  GpuSpec g = capped_gpu(0.0);
  g.tensor_fp8_power_ratio = 0.6;
  EXPECT_DOUBLE_EQ(tensor_power_weight(g, Precision::bf16), 1.0);
  EXPECT_DOUBLE_EQ(tensor_power_weight(g, Precision::fp16), 1.0);
  EXPECT_DOUBLE_EQ(tensor_power_weight(g, Precision::fp8), 0.6);
  // 700 W: bf16 phi^3 = 630 / (1430 x 0.75) = 630 / 1072.5 (phi 0.837); fp8 630 / (1430 x 0.6 x 0.75)
  // = 630 / 643.5 (phi 0.993): fp8 barely throttles at 700 W.
  EXPECT_NEAR(capped_clock(g, 0.75, 1e-3, Precision::bf16).sustained_fraction, std::cbrt(630.0 / 1072.5), 1e-12);
  EXPECT_NEAR(capped_clock(g, 0.75, 1e-3, Precision::fp8).sustained_fraction, std::cbrt(630.0 / 643.5), 1e-12);
  // 500 W: bf16 phi^3 = 430 / 1072.5 (phi 0.737); fp8 430 / 643.5 (phi 0.874).
  GpuSpec g500 = g;
  g500.tdp_w = 500.0;
  const CappedClock bf16 = capped_clock(g500, 0.75, 1e-3, Precision::bf16);
  const CappedClock fp8 = capped_clock(g500, 0.75, 1e-3, Precision::fp8);
  EXPECT_NEAR(bf16.sustained_fraction, std::cbrt(430.0 / 1072.5), 1e-12);
  EXPECT_NEAR(fp8.sustained_fraction, std::cbrt(430.0 / 643.5), 1e-12);
  // tau = 0: the whole kernel runs at the sustained clock.
  EXPECT_NEAR(fp8.duration_s, 1e-3 / std::cbrt(430.0 / 643.5), 1e-15);
  // Both throttled kernels draw exactly the cap, by the power model at their sustained clock.
  EXPECT_NEAR(fp8.sustained_power_w, 500.0, 1e-9);
  EXPECT_NEAR(tensor_power_w(g500, 0.75, fp8.sustained_fraction, Precision::fp8), 500.0, 1e-9);
  EXPECT_NEAR(bf16.sustained_power_w, 500.0, 1e-9);
  // fp8 at u = 0.5 under 700 W: 70 + 1430 x 0.6 x 0.5 = 499 W, below the cap: the boost clock.
  const CappedClock light = capped_clock(g, 0.5, 1e-3, Precision::fp8);
  EXPECT_DOUBLE_EQ(light.sustained_fraction, 1.0);
  EXPECT_NEAR(light.sustained_power_w, 499.0, 1e-9);
  // Dynamic energy per flop at the boost clock: (boost - idle) w(p) / peak(p): fp8 (twice bf16's
  // peak) spends 0.6 / 2 = 0.3 of bf16's.
  const double bf16_j = (tensor_power_w(g, 1.0, 1.0, Precision::bf16) - 70.0) / g.peak_flops(Precision::bf16);
  const double fp8_j = (tensor_power_w(g, 1.0, 1.0, Precision::fp8) - 70.0) / g.peak_flops(Precision::fp8);
  EXPECT_NEAR(fp8_j / bf16_j, 0.6 * g.peak_flops(Precision::bf16) / g.peak_flops(Precision::fp8), 1e-12);
  EXPECT_NEAR(g.peak_flops(Precision::fp8) / g.peak_flops(Precision::bf16), 2.0, 1e-3);
}

TEST(PowerCappedClock, KernelModelRunsFp8GemmsAtTheirCappedClock) {
  // As bf16 (KernelModelRunsTheComputeTermAtTheCappedClock): the fp8 main loop stretched to the
  // duration capped_clock gives at the fp8 power weight; no special case for the precision.
  GpuSpec boost = capped_gpu(1e-3);
  boost.tensor_boost_w = 0.0;
  GpuSpec capped = capped_gpu(1e-3);
  capped.tdp_w = 500.0;
  capped.tensor_fp8_power_ratio = 0.6;
  const ComputeOp op = gemm_fp8(16384, 16384, 16384);
  const double epilogue_s = 16384.0 * 16384.0 * 2.0 / (capped.hbm_bandwidth_Bps * capped.gemm_memory_efficiency);
  const double compute_boost_s = kernel_time(boost, op).time_s - capped.gemm_launch_s - epilogue_s;
  const double u = op.flops / (capped.peak_flops(Precision::fp8) * compute_boost_s);
  EXPECT_NEAR(kernel_time(capped, op).time_s,
              capped.gemm_launch_s + capped_clock(capped, u, compute_boost_s, Precision::fp8).duration_s + epilogue_s,
              1e-12);
  // A lower fp8 power per cycle throttles fp8 less: the same GEMM at w = 1 takes longer.
  GpuSpec heavier = capped;
  heavier.tensor_fp8_power_ratio = 1.0;
  EXPECT_GT(kernel_time(heavier, op).time_s, kernel_time(capped, op).time_s * 1.05);
  EXPECT_GT(kernel_time(capped, op).time_s, kernel_time(boost, op).time_s * 1.05);
}

// The shipped H100 profile against Azure's sustained cuBLASLt fp8 table on a 700 W H100
// (calibration/data/published/microbench.json micro-0022..0024: 8192^3 1290.1, 16384^3 1377.3,
// 32768^3 1382.2 TFLOP/s), within 6 % (the boost-clock model's +4.1 / +2.5 / +5.0 %, unchanged: the
// ratio is the bound below which a sustained fp8 GEMM does not throttle at 700 W); under a 500 W cap
// (torchtitan's H100s) the sustained fp8 clock is the closed form of the same parameters, and a
// sustained fp8 GEMM draws exactly the cap.
TEST(PowerCappedClock, ShippedH100ProfileKeepsTheMeasuredFp8RatesAndThrottlesAt500W) {
  GpuSpec g = testing::calibrated_gpu("h100-sxm5-80gb");
  ASSERT_TRUE(models_power_cap(g));
  EXPECT_NEAR(tflops(g, gemm_fp8(8192, 8192, 8192)), 1290.1, 0.06 * 1290.1);
  EXPECT_NEAR(tflops(g, gemm_fp8(16384, 16384, 16384)), 1377.3, 0.06 * 1377.3);
  EXPECT_NEAR(tflops(g, gemm_fp8(32768, 32768, 32768)), 1382.2, 0.06 * 1382.2);
  // The bound: (tensor_boost - idle) w u <= 700 - 70 W at u = gemm_fp8_efficiency, met within 1 %
  // (w = 0.406 against 630 / (2061.1 x 0.7494) = 0.408).
  const double bound = (g.tdp_w - g.idle_w) / ((g.tensor_boost_w - g.idle_w) * g.gemm_fp8_efficiency);
  EXPECT_LE(g.tensor_fp8_power_ratio, bound);
  EXPECT_GT(g.tensor_fp8_power_ratio, 0.99 * bound);
  EXPECT_DOUBLE_EQ(capped_clock(g, g.gemm_fp8_efficiency, 1.0, Precision::fp8).sustained_fraction, 1.0);
  // bf16 at its own efficiency throttles at 700 W: one rule, two energies per flop.
  EXPECT_LT(capped_clock(g, g.gemm_max_efficiency, 1.0, Precision::bf16).sustained_fraction, 0.75);
  GpuSpec g500 = g;
  g500.tdp_w = 500.0;
  const double u = g.gemm_fp8_efficiency;
  const double dynamic_w = (g.tensor_boost_w - g.idle_w) * g.tensor_fp8_power_ratio * u;
  const CappedClock c500 = capped_clock(g500, u, 1.0, Precision::fp8);
  ASSERT_LT(c500.sustained_fraction, 1.0);
  EXPECT_NEAR(c500.sustained_fraction, std::cbrt((500.0 - g.idle_w) / dynamic_w), 1e-12);
  EXPECT_NEAR(c500.sustained_power_w, 500.0, 1e-9);
  EXPECT_NEAR(tensor_power_w(g500, u, c500.sustained_fraction, Precision::fp8), 500.0, 1e-9);
  // 500 W throttles fp8 (by ~12 %: phi^3 = 430 / 630), bf16 more (a higher energy per flop).
  const CappedClock c700 = capped_clock(g, u, 1.0, Precision::fp8);
  EXPECT_LT(c500.sustained_fraction, 0.9);
  EXPECT_LT(c500.sustained_fraction, c700.sustained_fraction);
  EXPECT_LT(capped_clock(g500, u, 1.0, Precision::bf16).sustained_fraction, c500.sustained_fraction);
  // A long fp8 GEMM's rate falls with the clock: at 32768^3 (~50 ms, >> the controller's time
  // constant) the 500 W / 700 W rate ratio is within 2 % of the sustained clocks' ratio.
  const double ratio = tflops(g500, gemm_fp8(32768, 32768, 32768)) / tflops(g, gemm_fp8(32768, 32768, 32768));
  EXPECT_NEAR(ratio, c500.sustained_fraction / c700.sustained_fraction, 0.02);
}

}  // namespace
// The step energy charges an fp8 tensor kernel what the clock model has it draw: a large fp8 GEMM
// (tensor cores busy gemm_fp8_efficiency u of the cycles) at w(fp8) = tensor_fp8_power_ratio of the
// 16-bit path's power per busy cycle. Shipped H100, 700 W: P = idle + (tensor_boost - idle) w u phi^3
// with phi = 1 (the fp8 bound: 70 + 2061.1 x 0.406 x 0.7494 = 697.1 W < 700 W), bf16 throttled to the
// TDP (700 W). An fp8-GEMM-only step of 1 s on 8 GPUs: 8 x 697.1 J; a bf16 one: 8 x 700 J. Under a
// 500 W cap both throttle to it: the fp8 GEMMs draw 500 W, no less than bf16's.
TEST(PowerCappedClock, StepEnergyChargesFp8GemmsTheirClockModelPower) {
  GpuSpec g = testing::calibrated_gpu("h100-sxm5-80gb");
  const GpuPowerModel p = gpu_power_model(g);
  const double u = g.gemm_fp8_efficiency;
  const double fp8_w = g.idle_w + (g.tensor_boost_w - g.idle_w) * tensor_power_weight(g, Precision::fp8) * u;
  ASSERT_LT(fp8_w, g.tdp_w);  // not throttled: phi = 1
  EXPECT_NEAR(fp8_w, 697.1, 0.5);
  EXPECT_NEAR(p.low_precision_tensor_w, fp8_w, 1e-9);
  EXPECT_NEAR(p.low_precision_tensor_w, tensor_power_w(g, u, 1.0, Precision::fp8), 1e-9);
  EXPECT_NEAR(p.tensor_w, g.tdp_w, 1e-9);
  PowerInputs in;
  in.step_time_s = 1.0;
  in.gpu = p;
  in.classes = {{"fp8 gemm", 8, 1.0, 0.0, 0.0, 0.0, 1.0}, {"bf16 gemm", 8, 1.0, 0.0, 0.0, 0.0, 0.0}};
  const PowerStats s = compute_power(in);
  ASSERT_EQ(s.gpu_classes.size(), 2u);
  EXPECT_NEAR(s.gpu_classes[0].energy_per_step_j, 8 * fp8_w, 1e-9);
  EXPECT_NEAR(s.gpu_classes[1].energy_per_step_j, 8 * 700.0, 1e-9);
  // Energy per flop: fp8 does peak(fp8) u_fp8 flops per second at the boost clock, bf16
  // peak(bf16) u_bf16 phi_bf16 at its throttled clock; fp8 (w = 0.406, twice the peak) spends about
  // half of bf16's energy per flop (the dynamic part alone: w / 2 at equal clocks).
  const double phi_bf16 = capped_clock(g, g.gemm_max_efficiency, 1.0).sustained_fraction;
  const double fp8_j_per_flop = fp8_w / (g.peak_flops(Precision::fp8) * u);
  const double bf16_j_per_flop = 700.0 / (g.peak_flops(Precision::bf16) * g.gemm_max_efficiency * phi_bf16);
  EXPECT_LT(fp8_j_per_flop, 0.6 * bf16_j_per_flop);
  // 500 W: the fp8 GEMM throttles to the cap (ShippedH100ProfileKeepsTheMeasuredFp8RatesAndThrottlesAt500W).
  GpuSpec g500 = g;
  g500.tdp_w = 500.0;
  const GpuPowerModel p500 = gpu_power_model(g500);
  EXPECT_NEAR(p500.low_precision_tensor_w, 500.0, 1e-9);
  EXPECT_NEAR(p500.tensor_w, 500.0, 1e-9);
  // A budget above the fp8 GEMM's boost power (a step with long low-power phases) leaves it at its
  // boost-clock power, while bf16 takes the budget.
  GpuSpec roomy = g;
  roomy.tensor_power_budget_w = 800.0;
  const GpuPowerModel pr = gpu_power_model(roomy);
  EXPECT_NEAR(pr.low_precision_tensor_w, fp8_w, 1e-9);
  EXPECT_NEAR(pr.tensor_w, 800.0, 1e-9);
}

}  // namespace clustersim
