// Speed of the time-to-train Monte Carlo (issue 23's target: 1,000 runs of a 54-day job on 16,384
// GPUs in <= 5 s). Run by hand from the repository root: build/bench/bench_time_to_train [RUNS]
// (default 1000). The job is the Llama-3-405B-like case (calibration/time_to_train): its cluster is
// built once and its bill of materials counted (timed apart; the step's report of time_to_train_test,
// tests/cpp/training_run/step_report.hpp), then time_to_train() runs the Monte Carlo over a 10 s step
// with tokens for about 54 days of wall-clock time.
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include "../tests/cpp/training_run/step_report.hpp"
#include "sim/training_run/time_to_train.hpp"

int main(int argc, char** argv) {
  using namespace clustersim;
  using Clock = std::chrono::steady_clock;
  try {
    const int runs = argc > 1 ? std::stoi(argv[1]) : 1000;
    const ClusterSpec spec = load_cluster_spec("calibration/time_to_train/llama3-405b-cluster.json");
    const WorkloadSpec workload = load_workload_spec("calibration/time_to_train/llama3-405b-workload.json");
    const double step_s = 10.0, tokens_per_step = 2048.0 * 8192;
    const double cluster_avg_kw = 16384 * 1.3;  // about 1 kW per GPU with its host share, x PUE
    const auto t0 = Clock::now();
    const Report step = testing::step_report(spec, step_s, tokens_per_step, cluster_avg_kw);
    const auto t1 = Clock::now();
    const double tokens = 0.9 * 54 * 86400 / step_s * tokens_per_step;
    const TimeToTrainStats t = time_to_train(step, spec, workload, {tokens, std::nullopt, runs, 1});
    const auto t2 = Clock::now();
    std::printf("cluster build + bill of materials: %.2f s\n", std::chrono::duration<double>(t1 - t0).count());
    std::printf(
        "time_to_train, %d runs: %.3f s (days p10/p50/p90 %.1f/%.1f/%.1f, goodput %.4f, %.1f unexpected "
        "interruptions per run)\n",
        runs, std::chrono::duration<double>(t2 - t1).count(), t.days_p10, t.days_p50, t.days_p90, t.goodput,
        t.interruptions_mean);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_time_to_train: %s\n", e.what());
    return 1;
  }
  return 0;
}
