// The training run (sim/training_run): failures against their closed forms (Poisson counts, the
// renewal formula of a fixed checkpoint interval, Young's optimum), conservation of each run's time,
// determinism per seed, the straggler order statistic, bad input, and the Llama-3-405B-like case.
#include "sim/training_run/time_to_train.hpp"

#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../sim/sim_test_support.hpp"
#include "../spec_error_of.hpp"
#include "sim/training_run/straggler_model.hpp"
#include "sim/training_run/young_daly.hpp"
#include "step_report.hpp"

namespace clustersim {
namespace {

constexpr double kHour = 3600.0;
constexpr double kDay = 86400.0;

// One cause at `per_s` failures per second of the cluster, taking no node down.
FailureCause cause(const char* name, double per_s, bool planned = false) {
  FailureCause c;
  c.rate.cause = name;
  c.rate.planned = planned;
  c.components = 1.0;
  c.per_s = per_s;
  return c;
}

// Work, a checkpoint stall and interval, causes, and a restart that costs nothing.
TrainingRunInputs inputs(double work_s, double stall_s, double interval_s, std::vector<FailureCause> causes) {
  TrainingRunInputs in;
  in.work_s = work_s;
  in.checkpoint.stall_s = stall_s;
  in.checkpoint_interval_s = interval_s;
  in.causes = std::move(causes);
  return in;  // RestartTimes{} is all zeros
}

double mean(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v)
    s += x;
  return s / static_cast<double>(v.size());
}
double variance(const std::vector<double>& v) {
  const double m = mean(v);
  double s = 0.0;
  for (double x : v)
    s += (x - m) * (x - m);
  return s / static_cast<double>(v.size() - 1);
}

// Exponential failures: the count of a run is Poisson with the summed rate times the time the job
// ran. 100 h of work, one failure an hour (two causes, 3:1), checkpoints every 36 s with no stall
// (work lost per failure <= 36 s): mean = variance = 100 (x (1 + lost / work)). With 4,000 runs the
// mean's standard error is sqrt(100 / 4000) = 0.16 and the variance's about 100 sqrt(2 / 4000) = 2.2:
// tolerances of 4 standard errors.
TEST(TimeToTrain, InterruptionsArePoissonWithTheSummedRate) {
  const double rate = 1.0 / kHour;
  const TrainingRunInputs in = inputs(100 * kHour, 0.0, 36.0, {cause("a", 0.75 * rate), cause("b", 0.25 * rate)});
  const std::vector<RunOutcome> runs = simulate_training_runs(in, 4000, 7);
  std::vector<double> counts, exposure, share_a;
  for (const RunOutcome& r : runs) {
    counts.push_back(static_cast<double>(r.interruptions[0] + r.interruptions[1]));
    exposure.push_back(r.useful_s + r.checkpoint_s + r.lost_s);
    share_a.push_back(static_cast<double>(r.interruptions[0]));
  }
  const double expected = rate * mean(exposure);
  EXPECT_NEAR(expected, 100.0, 0.6);  // lost work adds at most 36 s per failure
  EXPECT_NEAR(mean(counts), expected, 4 * std::sqrt(expected / 4000));
  EXPECT_NEAR(variance(counts), expected, 4 * expected * std::sqrt(2.0 / 4000));
  EXPECT_NEAR(mean(share_a) / mean(counts), 0.75, 0.01);  // binomial split: sd 0.0007
}

// Nothing fails and no checkpoint is written: the run is its work, goodput exactly 1.
TEST(TimeToTrain, GoodputIsExactlyOneWithoutFailuresOrCheckpoints) {
  const TrainingRunInputs in =
      inputs(1234.5 * kHour, 30.0, std::numeric_limits<double>::infinity(), {cause("a", 0.0), cause("b", 0.0)});
  for (const RunOutcome& r : simulate_training_runs(in, 10, 1)) {
    EXPECT_EQ(r.wall_s, in.work_s);
    EXPECT_EQ(r.useful_s, in.work_s);
    EXPECT_EQ(r.checkpoint_s + r.lost_s + r.restart_s, 0.0);
  }
}

// A fixed interval tau, stall C, no restart cost: a segment with its checkpoint restarts until
// tau + C pass without a failure, E[time] = (exp(lambda (tau + C)) - 1) / lambda (renewal). K = 400
// segments (the last without a checkpoint), lambda = 1/h, tau = 30 min, C = 60 s:
//   E[wall] = 399 (e^(1860/3600) - 1) h + (e^(1800/3600) - 1) h = 399 x 0.67644 h + 0.64872 h = 270.55 h
// against 200 h of work: goodput 0.739. 2,000 runs: 4 standard errors of the mean.
TEST(TimeToTrain, FixedIntervalGoodputMatchesTheRenewalClosedForm) {
  const double lambda = 1.0 / kHour, tau = 1800.0, c = 60.0;
  const int k = 400;
  const TrainingRunInputs in = inputs(k * tau, c, tau, {cause("a", lambda)});
  const double closed = (k - 1) * std::expm1(lambda * (tau + c)) / lambda + std::expm1(lambda * tau) / lambda;
  EXPECT_NEAR(closed / kHour, 270.55, 0.01);
  std::vector<double> wall;
  for (const RunOutcome& r : simulate_training_runs(in, 2000, 3))
    wall.push_back(r.wall_s);
  const double se = std::sqrt(variance(wall) / static_cast<double>(wall.size()));
  EXPECT_NEAR(mean(wall), closed, 4 * se);
  EXPECT_NEAR(in.work_s / mean(wall), in.work_s / closed, 0.005);
}

// The four parts of each run sum to its clock, with planned maintenance, spares and repairs in play.
TEST(TimeToTrain, EachRunsWallTimeIsUsefulPlusCheckpointPlusLostPlusRestart) {
  TrainingRunInputs in = inputs(30 * kDay, 45.0, 1500.0,
                                {cause("gpu", 1.0 / (3 * kHour)), cause("software", 1.0 / (20 * kHour)),
                                 cause("planned", 1.0 / (30 * kHour), true)});
  in.causes[0].nodes_down = 1.0;
  in.checkpoint.read_s = 40.0;
  in.restart = {300.0, 300.0, 4 * kHour, 120.0, 60.0, 2};  // 2 spares, 4 h repairs: some waits
  int waited = 0;
  for (const RunOutcome& r : simulate_training_runs(in, 300, 11)) {
    const double parts = r.useful_s + r.checkpoint_s + r.lost_s + r.restart_s;
    EXPECT_NEAR(r.wall_s, parts, 1e-9 * r.wall_s);
    EXPECT_NEAR(r.useful_s, in.work_s, 1e-6);
    const auto interruptions = static_cast<double>(r.interruptions[0] + r.interruptions[1] + r.interruptions[2]);
    if (r.restart_s > interruptions * (300.0 + 300.0 + 120.0 + 60.0 + 40.0) + 1.0) ++waited;
  }
  EXPECT_GT(waited, 0);  // with 2 spares and a failure every 3 h some restarts wait for a repair
}

// Young's optimum: scan the interval (same seed for each: common random numbers) and take the one with
// the least mean wall time. lambda = 1 / 3 h, C = 60 s: sqrt(2 x 60 x 10,800) = 1,138 s; lambda C =
// 0.0056, where the first-order optimum holds (Daly's higher-order one, 1,098 s, is 3.5 % away).
TEST(TimeToTrain, SimulatedOptimumIntervalIsWithinTenPercentOfYoung) {
  const double mtbf = 3 * kHour, c = 60.0;
  const double young = young_interval_s(c, mtbf);
  EXPECT_NEAR(young, 1138.4, 0.1);
  EXPECT_NEAR(daly_interval_s(c, mtbf) / young, 0.965, 0.005);
  double best_tau = 0.0, best_wall = std::numeric_limits<double>::infinity();
  for (double f = 0.5; f <= 2.0001; f += 0.05) {
    const TrainingRunInputs in = inputs(200 * kDay, c, f * young, {cause("a", 1.0 / mtbf)});
    std::vector<double> wall;
    for (const RunOutcome& r : simulate_training_runs(in, 300, 5))
      wall.push_back(r.wall_s);
    if (mean(wall) < best_wall) best_wall = mean(wall), best_tau = f * young;
  }
  EXPECT_NEAR(best_tau / young, 1.0, 0.10) << best_tau;
}

// The slowest of n lognormal slowdowns: the quadrature against the closed form for n = 2,
// E[max(X1, X2)] = 2 E[X] Phi(sigma / sqrt 2), and against sampled maxima for n = 64.
TEST(StragglerModel, ExpectedMaxMatchesItsOrderStatistic) {
  EXPECT_EQ(expected_max_slowdown(0.0, 16384), 1.0);
  EXPECT_EQ(expected_max_slowdown(0.05, 1), 1.0);
  for (double cv : {0.02, 0.1, 0.5}) {
    const double sigma = lognormal_slowdown(cv).sigma;
    const double closed = 2.0 * 0.5 * std::erfc(-sigma / 2.0);  // 2 Phi(sigma / sqrt 2)
    EXPECT_NEAR(expected_max_slowdown(cv, 2), closed, 1e-9) << cv;
  }
  // Sampled: 20,000 maxima of 64 slowdowns at cv 0.05 (Box-Muller normals).
  const LognormalSlowdown d = lognormal_slowdown(0.05);
  std::mt19937_64 g(42);
  const auto u = [&g] { return (static_cast<double>(g() >> 11) + 0.5) * 0x1.0p-53; };
  std::vector<double> maxima;
  for (int t = 0; t < 20000; ++t) {
    double m = 0.0;
    for (int i = 0; i < 64; ++i) {
      const double z = std::sqrt(-2.0 * std::log(u())) * std::cos(2.0 * std::numbers::pi * u());
      m = std::max(m, std::exp(d.mu + d.sigma * z));
    }
    maxima.push_back(m);
  }
  const double se = std::sqrt(variance(maxima) / static_cast<double>(maxima.size()));
  EXPECT_NEAR(expected_max_slowdown(0.05, 64), mean(maxima), 4 * se);
  EXPECT_GT(expected_max_slowdown(0.05, 16384), expected_max_slowdown(0.05, 64));  // grows with scale
}

// A simulated step's report (step_report.hpp) at 1 MW of cluster power, with a chosen step time and
// tokens per step.
Report step_report(const ClusterSpec& spec, double step_time_s, double tokens_per_step) {
  return testing::step_report(spec, step_time_s, tokens_per_step, 1000.0);
}

WorkloadSpec small_workload() {
  return load_workload_spec("gpt3-1.3b");
}

TEST(TimeToTrain, SameSeedSameReportOtherSeedOtherRuns) {
  const ClusterSpec spec = testing::fat_tree_spec(16, 8, 8);
  const Report step = step_report(spec, 2.0, 4e6);
  const TimeToTrainRequest request{2e12, std::nullopt, 200, 9};
  Report a = step, b = step, c = step;
  a.time_to_train = time_to_train(step, spec, small_workload(), request);
  b.time_to_train = time_to_train(step, spec, small_workload(), request);
  TimeToTrainRequest other = request;
  other.seed = 10;
  c.time_to_train = time_to_train(step, spec, small_workload(), other);
  EXPECT_EQ(a.to_json(), b.to_json());
  EXPECT_NE(a.time_to_train->days_p50, c.time_to_train->days_p50);
  // The JSON round trip keeps the section.
  EXPECT_EQ(Report::from_json(a.to_json()).to_json(), a.to_json());
}

TEST(TimeToTrain, ZeroRatesGiveGoodputOneThroughTheWholeModel) {
  ClusterSpec spec = testing::fat_tree_spec(16, 8, 8);
  ReliabilitySpec& r = spec.reliability;
  for (std::optional<double>* rate :
       {&r.gpu_per_year, &r.hbm_per_year, &r.nvswitch_per_year, &r.nic_per_year, &r.switch_per_year, &r.link_per_year,
        &r.host_per_year, &r.software_per_year, &r.host_maintenance_per_year, &r.planned_maintenance_per_year})
    *rate = 0.0;
  spec.storage.aggregate_GBps = 0.0;  // never written: no failure, no interval
  const Report step = step_report(spec, 2.0, 4e6);
  const TimeToTrainStats t = time_to_train(step, spec, small_workload(), {4e11, std::nullopt, 50, 1});
  EXPECT_EQ(t.goodput, 1.0);
  EXPECT_EQ(t.steps, 1e5);  // 4e11 / 4e6
  EXPECT_DOUBLE_EQ(t.days_p50, 1e5 * 2.0 / kDay);
  EXPECT_EQ(t.interruptions_mean, 0.0);
  EXPECT_TRUE(std::isinf(t.mtbf_s));
}

TEST(TimeToTrain, ZeroStorageBandwidthWithCheckpointsNamesTheJsonPath) {
  ClusterSpec spec = testing::fat_tree_spec(16, 8, 8);
  spec.source_file = "c.json";
  spec.storage.aggregate_GBps = 0.0;
  const Report step = step_report(spec, 2.0, 4e6);
  const SpecError e = testing::spec_error_of([&] {
    time_to_train(step, spec, small_workload(), {4e11, std::nullopt, 10, 1});
  });
  EXPECT_EQ(e.file(), "c.json");
  EXPECT_EQ(e.json_path(), "/storage/aggregate_GBps");
}

TEST(ReliabilitySpec, NegativeRateIsRefusedWithItsJsonPath) {
  const std::string text = R"({"gpu": "h100-sxm5-80gb", "nodes": 2, "node": {"gpus": 8, "nics": 8,
                              "scale_up": {"type": "nvswitch", "bandwidth_GBps": 450}},
                              "reliability": {"hbm_per_year": -0.1}})";
  const SpecError e = testing::spec_error_of([&] { parse_cluster_spec(text, "c.json"); });
  EXPECT_EQ(e.json_path(), "/reliability/hbm_per_year");
  const std::string storage = R"({"gpu": "h100-sxm5-80gb", "nodes": 2, "node": {"gpus": 8, "nics": 8,
                                 "scale_up": {"type": "nvswitch", "bandwidth_GBps": 450}},
                                 "storage": {"kind": "tape"}})";
  EXPECT_EQ(testing::spec_error_of([&] { parse_cluster_spec(storage, "c.json"); }).json_path(), "/storage/kind");
}

// The fit's own case (in sample): Llama 3 405B, 16,384 H100 for 54 days (arXiv 2407.21783): 419
// unexpected interruptions, GPU > HBM3 > software > switch/cable > host maintenance, > 90 % effective
// training time.
TEST(TimeToTrain, Llama3LikeRunReproducesItsPublishedInterruptions) {
  const ClusterSpec spec =
      load_cluster_spec(std::string(CLUSTERSIM_SOURCE_DIR) + "/calibration/time_to_train/llama3-405b-cluster.json");
  const WorkloadSpec workload =
      load_workload_spec(std::string(CLUSTERSIM_SOURCE_DIR) + "/calibration/time_to_train/llama3-405b-workload.json");
  const Report step = step_report(spec, 10.0, 2048.0 * 8192);  // the run's step: about 10 s (Table 4's MFU)
  const ComponentCounts counts = component_counts(step);
  EXPECT_EQ(counts.of(FailureComponent::gpu), 16384);
  EXPECT_EQ(counts.of(FailureComponent::node), 2048);
  EXPECT_EQ(counts.of(FailureComponent::nic), 16384);
  EXPECT_EQ(counts.of(FailureComponent::cable), 49152);  // the fit's denominator (reliability_spec.cpp)
  const std::vector<FailureCause> causes = failure_causes(failure_rates(spec.reliability), counts);
  const double in_54_days = total_rate_per_s(causes, false) * 54 * kDay;
  EXPECT_NEAR(in_54_days, 419.0, 0.2 * 419.0);
  // Tokens for about 54 days of wall time at ~90 % goodput.
  const double tokens = 0.9 * 54 * kDay / 10.0 * 2048.0 * 8192;
  const TimeToTrainStats t = time_to_train(step, spec, workload, {tokens, std::nullopt, 300, 1});
  EXPECT_NEAR(t.days_mean, 54.0, 3.0);
  EXPECT_NEAR(t.interruptions_mean, 419.0, 0.2 * 419.0);
  EXPECT_GE(t.goodput, 0.87);
  EXPECT_LE(t.goodput, 0.97);
  // The published order of the causes (most first): GPU, HBM3, software, switch/cable, host maintenance.
  const std::vector<std::string> order = {"gpu", "hbm", "software", "link", "host_maintenance"};
  std::vector<std::string> unexpected;
  for (const InterruptionCause& c : t.causes)
    if (!c.planned) unexpected.push_back(c.cause);
  ASSERT_GE(unexpected.size(), order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    EXPECT_EQ(unexpected[i], order[i]) << i;
  // Expected: the rates over the mean wall time (419 x days / 54); failures strike at any time, during
  // restarts too, so the Monte Carlo's mean count is the same in expectation (Wald's identity): 300
  // runs of about 410 +- 20 leave a standard error of about 1.2, 4 of them 5.
  EXPECT_NEAR(t.interruptions_expected, 419.0 * t.days_mean / 54.0, 1.0);
  EXPECT_NEAR(t.interruptions_mean, t.interruptions_expected, 5.0);
  // Checkpoint: 405e9 parameters x (2 bytes bf16 weights + 12 bytes fp32 master weights and Adam moments).
  EXPECT_NEAR(t.checkpoint_bytes / (405e9 * 14.0), 1.0, 0.01);
  std::printf(
      "llama3-like: %.1f expected / %.1f per run unexpected interruptions, goodput %.4f, %.1f days, "
      "checkpoint %.3g B every %.0f s\n",
      t.interruptions_expected, t.interruptions_mean, t.goodput, t.days_mean, t.checkpoint_bytes,
      t.checkpoint_interval_s);
}

}  // namespace
}  // namespace clustersim
