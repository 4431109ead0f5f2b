// The clock under the power cap of the 2026 GPUs (issue 22): priors, flagged as such. Each entry's
// tensor_boost_W is the measured H100's ratio carried over (the H100 profile's 2117.5 W against its
// 700 W cap: (2117.5 - 70) / (700 - 70) = 3.25 times the dynamic power the cap allows), MI325X the
// MI300X's (same die and clock). A sustained large bf16 GEMM (tensor cores busy gemm_max_efficiency X)
// then holds, by power_capped_clock.cpp's closed form,
//   phi = ((tdp - idle) / ((tensor_boost_W - idle) X)) ^ (1/3)
// of the boost clock.
#include <cmath>

#include <gtest/gtest.h>

#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/power_capped_clock.hpp"
#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {
namespace {

struct Prior {
  const char* id;
  double tensor_boost_w;
  double sustained_fraction;  // phi above, by hand
};

// B200: 140 + 860 x 3.25 = 2935 W; (860 / (2795 x 0.895))^(1/3) = 0.3438^(1/3) = 0.7006.
// B300: 150 + 950 x 3.25 = 3238 W; (950 / (3088 x 0.895))^(1/3) = 0.7006. GB200: 170 + 1030 x 3.25 =
// 3518 W; (1030 / (3348 x 0.895))^(1/3) = 0.7005. GB300: 200 + 1200 x 3.25 = 4100 W: 0.7005.
// MI300X: 75 + 675 x 3.25 = 2269 W; (675 / (2194 x 0.6243))^(1/3) = 0.4928^(1/3) = 0.7898.
// MI325X: the MI300X's 2269 W under 1000 W: (900 / (2169 x 0.6983))^(1/3) = 0.5942^(1/3) = 0.8408.
// MI355X: 140 + 1260 x 3.25 = 4235 W; (1260 / (4095 x 0.7074))^(1/3) = 0.4350^(1/3) = 0.7576.
constexpr Prior kPriors[] = {{"b200", 2935, 0.7006},  {"b300", 3238, 0.7006},   {"gb200", 3518, 0.7005},
                             {"gb300", 4100, 0.7005}, {"mi300x", 2269, 0.7898}, {"mi325x", 2269, 0.8408},
                             {"mi355x", 4235, 0.7576}};

TEST(PowerCapPriors, EveryNewGpuHoldsTheClosedFormClockAndSaysItIsAPrior) {
  for (const Prior& p : kPriors) {
    GpuSpec g = find_gpu(p.id, "t", "");
    apply_calibration_profile(g);  // none of them has a profile: the catalogue's figures stay
    EXPECT_DOUBLE_EQ(g.tensor_boost_w, p.tensor_boost_w) << p.id;
    EXPECT_TRUE(models_power_cap(g)) << p.id;
    EXPECT_TRUE(power_cap_is_prior(g)) << p.id;
    EXPECT_EQ(g.sources.at("tensor_boost_W").rfind("assumed: prior", 0), 0u) << p.id;
    const double closed = std::cbrt((g.tdp_w - g.idle_w) / ((g.tensor_boost_w - g.idle_w) * g.gemm_max_efficiency));
    const CappedClock c = capped_clock(g, g.gemm_max_efficiency, 1.0);
    EXPECT_NEAR(c.sustained_fraction, closed, 1e-12) << p.id;
    EXPECT_NEAR(c.sustained_fraction, p.sustained_fraction, 5e-4) << p.id;
    // At the cap: the sustained GEMM draws the TDP.
    EXPECT_NEAR(c.sustained_power_w, g.tdp_w, 1e-6 * g.tdp_w) << p.id;
  }
  // The measured H100's and H200's clocks are fitted (their calibration profiles), not priors; the
  // H200 NVL, without a profile, borrows the H100's fit: a prior.
  for (const char* id : {"h100-sxm5-80gb", "h200-sxm-141gb"}) {
    GpuSpec g = find_gpu(id, "t", "");
    apply_calibration_profile(g);
    EXPECT_TRUE(models_power_cap(g)) << id;
    EXPECT_FALSE(power_cap_is_prior(g)) << id;
  }
  GpuSpec h100 = find_gpu("h100-sxm5-80gb", "t", "");
  apply_calibration_profile(h100);
  // The ratio the priors carry over (3.25, from the profile's 2117.5 W at 700 W) holds its large GEMMs
  // at 0.698 of the boost clock; a refit of the H100 profile moves it by a little (2131.1 W: 0.697).
  EXPECT_NEAR(capped_clock(h100, h100.gemm_max_efficiency, 1.0).sustained_fraction, 0.70, 0.01);
  GpuSpec h200_nvl = find_gpu("h200-nvl-141gb", "t", "");
  apply_calibration_profile(h200_nvl);
  EXPECT_TRUE(power_cap_is_prior(h200_nvl));
  // A GPU without the model is no prior either.
  EXPECT_FALSE(power_cap_is_prior(find_gpu("l4", "t", "")));
}

// The report carries the flag (JSON power.clock_cap_prior, a text line) on a prior GPU and not on the
// fitted H100; it reads back.
TEST(PowerCapPriors, TheReportFlagsAPriorClock) {
  WorkloadSpec w = load_workload_spec("gpt3-1.3b");
  w.training.global_batch = 16;
  w.training.micro_batch = 1;
  SimulationOptions options;
  options.fidelity = "analytical";
  ClusterSpec spec = testing::fat_tree_spec(1, 8, 8);
  spec.gpu_id = "mi300x";
  const Report prior = simulate(spec, w, options);
  ASSERT_TRUE(prior.power.has_value());
  EXPECT_TRUE(prior.power->clock_cap_modelled);
  EXPECT_TRUE(prior.power->clock_cap_prior);
  EXPECT_NE(prior.to_text().find("Clock under cap    a PRIOR"), std::string::npos) << prior.to_text();
  EXPECT_TRUE(Report::from_json(prior.to_json()).power->clock_cap_prior);
  // The GEMM clock sits between the sustained one (0.790 of 2100 MHz = 1659 MHz) and the boost clock.
  EXPECT_GE(prior.power->gemm_clock_MHz, 0.789 * 2100.0);
  EXPECT_LE(prior.power->gemm_clock_MHz, 2100.0 + 1e-9);
  spec.gpu_id = "h100-sxm5-80gb";
  const Report fitted = simulate(spec, w, options);
  EXPECT_FALSE(fitted.power->clock_cap_prior);
  EXPECT_EQ(fitted.to_text().find("a PRIOR"), std::string::npos);
  EXPECT_FALSE(Report::from_json(fitted.to_json()).power->clock_cap_prior);
}

}  // namespace
}  // namespace clustersim
