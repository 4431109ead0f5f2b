// The power model (sim/power): energy = sum of power x time per activity, its conservation, PUE
// scaling, overrides, and the catalogue's completeness.
#include "sim/power/power_model.hpp"

#include <numeric>

#include <gtest/gtest.h>

#include "../spec_error_of.hpp"
#include "sim/core/resources.hpp"
#include "sim/hardware/calibration_profile.hpp"
#include "sim/hardware/gpu_catalogue.hpp"
#include "sim/hardware/power_capped_clock.hpp"
#include "sim/power/gpu_energy.hpp"
#include "sim/power/power_catalogue.hpp"
#include "sim/simulate.hpp"
#include "sim_test_support.hpp"
#include "topologies/cluster_spec.hpp"
#include "workloads/workload_spec.hpp"

namespace clustersim {
namespace {

GpuPowerModel test_gpu() {
  return GpuPowerModel{.id = "test",
                       .tdp_w = 700,
                       .waiting_w = 100,
                       .tensor_w = 600,
                       .vector_w = 400,
                       .communication_w = 200,
                       .overlap_communication_w = 50,
                       .source = "test"};
}

// Two GPUs, one step of 1 s:
//   GPU a: tensor 0.5 s, vector 0.2 s, collectives in flight 0.3 s of which 0.1 s exposed (0.2 s under
//          compute), waiting 1 - 0.5 - 0.2 - 0.1 = 0.2 s
//          = 600 x 0.5 + 400 x 0.2 + 200 x 0.1 + 100 x 0.2 + 50 x 0.2 (overlap) = 430 J
//   GPU b: tensor 0.3 s, collectives 0.4 s all exposed, waiting 0.3 s
//          = 600 x 0.3 + 200 x 0.4 + 100 x 0.3 = 290 J
// plus two hosts at 100 W (200 J) and a switch of 50..150 W busy half the step (100 W: 100 J).
PowerInputs two_gpu_step(double pue) {
  PowerInputs in;
  in.step_time_s = 1.0;
  in.tokens_per_step = 1000.0;
  in.pue = pue;
  in.gpu = test_gpu();
  in.classes = {{"a", 1, 0.5, 0.2, 0.3, 0.1}, {"b", 1, 0.3, 0.0, 0.4, 0.4}};
  in.devices = {{"host", 2, {100, 100, "test"}, 0.0}, {"leaf_switch", 1, {50, 150, "test"}, 0.5}};
  return in;
}

TEST(PowerModel, TwoGpuTimelineIsPowerTimesTimePerActivity) {
  const PowerStats s = compute_power(two_gpu_step(1.0));
  ASSERT_EQ(s.gpu_classes.size(), 2u);
  EXPECT_NEAR(s.gpu_classes[0].energy_per_step_j, 430.0, 1e-9);
  EXPECT_NEAR(s.gpu_classes[1].energy_per_step_j, 290.0, 1e-9);
  EXPECT_NEAR(s.gpu_classes[0].waiting_s, 0.2, 1e-12);
  EXPECT_NEAR(s.gpu_classes[0].overlapped_communication_s, 0.2, 1e-12);
  EXPECT_NEAR(s.gpu_avg_w, (430.0 + 290.0) / 2, 1e-9);
  EXPECT_NEAR(s.energy_per_step_j, 430.0 + 290.0 + 200.0 + 100.0, 1e-9);
  EXPECT_NEAR(s.it_avg_kw, 1.02, 1e-12);
  EXPECT_NEAR(s.energy_per_token_j, 1.02, 1e-12);
  // Peak: a at tensor + overlap (650 W), b at tensor (600 W), hosts 200 W, the switch at 150 W.
  EXPECT_NEAR(s.peak_kw, 1.6, 1e-12);
}

TEST(PowerModel, OverlapNeverLiftsAGpuAboveItsTdp) {
  GpuPowerModel g = test_gpu();
  g.tensor_w = 690;  // + 50 W of overlap would be 740 W > 700 W: only 10 W are added
  const GpuActivity a = gpu_activity(1.0, 0.0, 1.0, 0.0, 1.0);
  EXPECT_NEAR(gpu_energy_j(g, a), 700.0, 1e-9);
  EXPECT_NEAR(gpu_peak_w(g, a), 700.0, 1e-9);
}

// fp8 tensor kernels draw low_precision_tensor_w, 16-bit ones tensor_w. One GPU, step 1 s: tensor 0.5 s
// of which 0.3 s in fp8, vector 0.2 s, collectives 0.3 s of which 0.1 s exposed (0.2 s overlapped),
// waiting 0.2 s; tensor 600 W, fp8 tensor 300 W:
//   600 x 0.2 + 300 x 0.3 + 400 x 0.2 + 200 x 0.1 + 100 x 0.2 = 330 J, plus the overlap increment
//   min(50, 700 - P) averaged over compute time: (0.2 x 50 + 0.3 x 50 + 0.2 x 50) / 0.7 x 0.2 = 10 J.
// With 690 W fp8 tensor power the fp8 part's increment is only 10 W:
//   (0.2 x 50 + 0.3 x 10 + 0.2 x 50) / 0.7 x 0.2 = 6.571 J.
TEST(PowerModel, Fp8TensorTimeDrawsTheLowPrecisionTensorPower) {
  GpuPowerModel g = test_gpu();
  g.low_precision_tensor_w = 300;
  PowerInputs in;
  in.step_time_s = 1.0;
  in.gpu = g;
  in.classes = {{"a", 1, 0.5, 0.2, 0.3, 0.1, 0.3}};
  EXPECT_NEAR(compute_power(in).gpu_classes[0].energy_per_step_j, 340.0, 1e-9);
  // Without fp8 time the class is charged as before: 430 J (TwoGpuTimelineIsPowerTimesTimePerActivity).
  in.classes[0].low_precision_tensor_s = 0.0;
  EXPECT_NEAR(compute_power(in).gpu_classes[0].energy_per_step_j, 430.0, 1e-9);
  in.classes[0].low_precision_tensor_s = 0.3;
  in.gpu.low_precision_tensor_w = 690;
  const double expected = 600 * 0.2 + 690 * 0.3 + 400 * 0.2 + 200 * 0.1 + 100 * 0.2 + (10.0 + 3.0 + 10.0) / 0.7 * 0.2;
  EXPECT_NEAR(compute_power(in).gpu_classes[0].energy_per_step_j, expected, 1e-9);
  // Peak: the 16-bit tensor kernels plus overlap (650 W) < fp8 at 690 + 10 W.
  EXPECT_NEAR(compute_power(in).peak_kw, 0.7, 1e-12);
  // fp8 time beyond the tensor time is clamped to it.
  EXPECT_DOUBLE_EQ(gpu_activity(0.5, 0.0, 0.0, 0.0, 1.0, 0.9).low_precision_tensor_s, 0.5);
}

TEST(PowerModel, PerClassAndPerDeviceEnergiesSumToTheTotal) {
  const PowerStats s = compute_power(two_gpu_step(1.3));
  const double devices = std::accumulate(s.by_device.begin(), s.by_device.end(), 0.0,
                                         [](double sum, const DeviceEnergy& d) { return sum + d.energy_per_step_j; });
  EXPECT_NEAR(devices, s.energy_per_step_j, 1e-9);
  const double classes = std::accumulate(s.gpu_classes.begin(), s.gpu_classes.end(), 0.0,
                                         [](double sum, const GpuClassEnergy& c) { return sum + c.energy_per_step_j; });
  EXPECT_EQ(s.by_device.front().device, "gpu");
  EXPECT_NEAR(classes, s.by_device.front().energy_per_step_j, 1e-9);
  EXPECT_EQ(s.by_device.back().device, "facility");
  EXPECT_NEAR(s.by_device.back().energy_per_step_j, 1020.0 * 0.3, 1e-9);
}

TEST(PowerModel, PueScalesFacilityEnergyAndNotIt) {
  const PowerStats one = compute_power(two_gpu_step(1.0));
  const PowerStats two = compute_power(two_gpu_step(2.0));
  EXPECT_NEAR(two.energy_per_step_j, 2.0 * one.energy_per_step_j, 1e-9);
  EXPECT_NEAR(two.cluster_avg_kw, 2.0 * one.cluster_avg_kw, 1e-12);
  EXPECT_NEAR(two.peak_kw, 2.0 * one.peak_kw, 1e-12);
  EXPECT_DOUBLE_EQ(two.it_avg_kw, one.it_avg_kw);
  EXPECT_DOUBLE_EQ(two.gpu_avg_w, one.gpu_avg_w);
}

// Every GPU of the hardware catalogue has power figures with a source for each, and no activity
// draws more than the TDP.
TEST(PowerCatalogue, EveryCatalogueGpuHasSourcedFiguresWithinItsTdp) {
  for (const std::string& id : gpu_catalogue_ids()) {
    const GpuPowerModel m = gpu_power_model(find_gpu(id, "test", "/gpu"));
    SCOPED_TRACE(id);
    EXPECT_NE(m.source.find("sim/power/catalogue/gpus/" + id + ".json"), std::string::npos) << m.source;
    for (double w : {m.idle_w, m.waiting_w, m.tensor_w, m.vector_w, m.communication_w}) {
      EXPECT_GT(w, 0.0);
      EXPECT_LE(w, m.tdp_w);
    }
    EXPECT_LE(m.waiting_w, m.vector_w);
    EXPECT_LE(m.vector_w, m.tensor_w);
    EXPECT_GT(m.host_w_per_gpu, 0.0);
  }
}

TEST(PowerCatalogue, NetworkLookupsTakeTheNearestSpeedAndScaleSwitchesByRadix) {
  EXPECT_DOUBLE_EQ(transceiver_power(400).static_w, 9.0);
  EXPECT_NE(transceiver_power(350).source.find("nearest catalogued speed 400"), std::string::npos);
  const DevicePower ndr64 = switch_power("infiniband", 400, 64);
  const DevicePower ndr32 = switch_power("infiniband", 400, 32);
  EXPECT_NEAR(ndr32.max_w, ndr64.max_w / 2, 1e-9);
  EXPECT_LT(nic_power(200).max_w, nic_power(400).max_w);
}

// --- the whole flow: simulate() fills power from the replay, with the spec's overrides ----------

WorkloadSpec small_workload() {
  WorkloadSpec w = load_workload_spec("gpt3-1.3b");
  w.training.global_batch = 16;
  w.training.micro_batch = 1;
  return w;
}

TEST(PowerModel, SimulatedStepConservesEnergyAndUsesOverrides) {
  ClusterSpec spec = testing::fat_tree_spec(2, 8, 8);
  SimulationOptions options;
  options.fidelity = "analytical";
  const Report base = simulate(spec, small_workload(), options);
  ASSERT_TRUE(base.power.has_value());
  const PowerStats& p = *base.power;
  double sum = 0.0;
  for (const DeviceEnergy& d : p.by_device)
    sum += d.energy_per_step_j;
  EXPECT_NEAR(sum, p.energy_per_step_j, 1e-9 * p.energy_per_step_j);
  int ranks = 0;
  for (const GpuClassEnergy& c : p.gpu_classes)
    ranks += c.ranks;
  EXPECT_EQ(ranks, 16);
  EXPECT_NEAR(p.cluster_avg_kw, p.energy_per_step_j / base.step_time_s / 1e3, 1e-9);
  EXPECT_NEAR(p.pue, 1.3, 1e-12);

  // The GPU figures of the spec replace the catalogue's: the class energy follows them exactly.
  spec.power.gpu_tensor_w = 300;
  spec.power.gpu_vector_w = 200;
  spec.power.gpu_communication_w = 100;
  spec.power.gpu_overlap_communication_w = 0;
  spec.power.gpu_waiting_w = 50;
  spec.power.pue = 1.0;
  const Report low = simulate(spec, small_workload(), options);
  ASSERT_TRUE(low.power.has_value());
  for (const GpuClassEnergy& c : low.power->gpu_classes) {
    const double per_gpu = 300 * c.tensor_s + 200 * c.vector_s + 100 * c.exposed_communication_s + 50 * c.waiting_s;
    EXPECT_NEAR(c.energy_per_step_j, per_gpu * c.ranks, 1e-9 * c.energy_per_step_j) << c.name;
  }
  EXPECT_LT(low.power->gpu_avg_w, p.gpu_avg_w);
  EXPECT_DOUBLE_EQ(low.power->by_device.back().energy_per_step_j, 0.0);  // PUE 1: no facility overhead
}

// An fp8 step on the H100: the replay puts the fp8 GEMMs' time at the fp8 tensor power (a large fp8
// GEMM under the step's budget: w = 0.406, utilization gemm_fp8_efficiency), the rest of the tensor
// time (attention, in bf16) at a bf16 GEMM's. The class energy is sum of power x time with an fp8
// part f of the tensor time: E = E_bf16 - (tensor_w - fp8_w) f, E_bf16 charging all of it at
// tensor_w; f must lie strictly between 0 (no fp8 GEMM) and tensor_s (attention stays in bf16).
TEST(PowerModel, SimulatedFp8StepChargesItsFp8GemmsTheFp8Power) {
  ClusterSpec spec = testing::fat_tree_spec(2, 8, 8);
  spec.power.gpu_overlap_communication_w = 0;  // no overlap increment: energy is exactly sum P x t
  SimulationOptions options;
  options.fidelity = "analytical";
  WorkloadSpec w = small_workload();
  w.training.precision = Precision::fp8;
  const Report r = simulate(spec, w, options);
  ASSERT_TRUE(r.power.has_value());
  GpuSpec g = find_gpu("h100-sxm5-80gb", "test", "/gpu");
  apply_calibration_profile(g);
  g.tensor_power_budget_w = r.power->tensor_power_budget_w;
  const GpuPowerModel m = gpu_power_model(g);
  EXPECT_NEAR(m.low_precision_tensor_w, large_gemm_power_w(g, Precision::fp8), 1e-9);
  ASSERT_GT(m.tensor_w, m.low_precision_tensor_w + 1.0);  // fp8 draws less per busy cycle (w = 0.406)
  for (const GpuClassEnergy& c : r.power->gpu_classes) {
    if (c.tensor_s <= 0.0) continue;
    const double bf16_j = m.tensor_w * c.tensor_s + m.vector_w * c.vector_s +
                          m.communication_w * c.exposed_communication_s + m.waiting_w * c.waiting_s;
    const double fp8_s = (bf16_j - c.energy_per_step_j / c.ranks) / (m.tensor_w - m.low_precision_tensor_w);
    EXPECT_GT(fp8_s, 0.1 * c.tensor_s) << c.name;  // the linear layers' GEMMs run in fp8
    EXPECT_LT(fp8_s, c.tensor_s) << c.name;        // attention stays in bf16
  }
}

TEST(PowerSpec, PueBelowOneAndNegativeFiguresAreRefusedWithTheirPath) {
  const std::string head = R"({"gpu": "h100-sxm5-80gb", "node": {"scale_up": {"bandwidth_GBps": 450}}, )";
  SpecError e = testing::spec_error_of([&] { parse_cluster_spec(head + R"("power": {"pue": 0.9}})", "c.json"); });
  EXPECT_EQ(e.json_path(), "/power/pue");
  e = testing::spec_error_of([&] { parse_cluster_spec(head + R"("power": {"nic_w": -1}})", "c.json"); });
  EXPECT_EQ(e.json_path(), "/power/nic_w");
  e = testing::spec_error_of([&] { parse_cluster_spec(head + R"("power": {"gpu_tensor": 300}})", "c.json"); });
  EXPECT_EQ(e.file(), "c.json");  // unknown keys are typos, not ignored
  const ClusterSpec ok = parse_cluster_spec(head + R"("power": {"pue": 1.1, "host_w_per_gpu": 150}})", "c.json");
  EXPECT_EQ(ok.power.host_w_per_gpu, 150.0);
  EXPECT_EQ(parse_cluster_spec(cluster_spec_to_json(ok), "c.json"), ok);
}

}  // namespace
}  // namespace clustersim
