// Speed of the serving engine (issue 20's target: one hour at 100 requests/s on 64 replicas, about
// 360,000 requests, in <= 30 s on one core). Run by hand: build/bench/bench_serve [SPEC] [--set k=v]...
// (default: the llama3-8b-h100 preset at 64 replicas, 100 requests/s, 3600 s).
//
// The iteration time comes from a stand-in with the shape of Llama-3-8B on an H100 (6 ms per
// iteration: 16 GB of bf16 weights read at 3.35 TB/s x 0.8; 30 us per new token: 16 GFLOP at ~530
// TFLOP/s; 0.05 us per token of context: 128 KiB of KV read per token), so this times the engine
// (traffic, scheduler, metrics) alone. It prints the iteration_time calls and the batch entries they
// carried: the calibrated model's (sim/serving/iteration_model.cpp) cost is ns per call x calls more.
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <sys/resource.h>

#include "sim/core/error.hpp"
#include "sim/serving/serving_engine.hpp"

namespace {

class StandInModel final : public clustersim::IterationModel {
 public:
  explicit StandInModel(std::int64_t kv_tokens) { memory_.kv_capacity_tokens = kv_tokens; }

  clustersim::IterationTime iteration_time(std::span<const clustersim::IterationEntry> batch) const override {
    ++calls_;
    entries_ += static_cast<std::int64_t>(batch.size());
    double tokens = 0.0;
    double context = 0.0;
    for (const clustersim::IterationEntry& e : batch) {
      tokens += static_cast<double>(e.new_tokens);
      context += static_cast<double>(e.context_tokens);
    }
    clustersim::IterationTime t;
    t.time_s = t.compute_s = 6e-3 + 30e-6 * tokens + 0.05e-6 * context;
    return t;
  }
  const clustersim::ReplicaMemory& memory() const override { return memory_; }

  mutable std::int64_t calls_ = 0;
  mutable std::int64_t entries_ = 0;

 private:
  clustersim::ReplicaMemory memory_;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string source = "llama3-8b-h100";
  clustersim::ServingOverrides overrides = {
      {"replica.replicas", "64"}, {"traffic.rate_rps", "100"}, {"traffic.duration_s", "3600"}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--set" && i + 1 < argc) {
      const std::string kv = argv[++i];
      const auto eq = kv.find('=');
      overrides.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
    } else {
      source = a;
    }
  }
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const clustersim::ServingSpec spec = clustersim::load_serving_spec(source, overrides);
    const std::vector<clustersim::RequestArrival> arrivals = clustersim::make_traffic(spec.traffic);
    const double traffic_s = seconds_since(t0);
    // About 55 GB of KV cache (80 GB x 0.9 less 16 GB of weights) at 128 KiB per token.
    const StandInModel model(420'000);
    const auto t1 = std::chrono::steady_clock::now();
    const clustersim::ServingResult r = clustersim::run_serving(spec, model, arrivals);
    const double engine_s = seconds_since(t1);
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    const clustersim::ServingSummary& s = r.summary;
    std::printf("requests %lld (finished %lld)\nreplicas %d\nsimulated_s %.1f\n", static_cast<long long>(s.requests),
                static_cast<long long>(s.finished), spec.replicas, s.makespan_s);
    std::printf("traffic_wall_s %.3f\nengine_wall_s %.3f\nwall_s %.3f\n", traffic_s, engine_s, traffic_s + engine_s);
    std::printf("iteration_time_calls %lld\nbatch_entries %lld\nns_per_call_engine %.0f\n",
                static_cast<long long>(model.calls_), static_cast<long long>(model.entries_),
                engine_s * 1e9 / static_cast<double>(model.calls_));
    std::printf("peak_rss_bytes %.0f\n", static_cast<double>(u.ru_maxrss) * 1024.0);
    std::printf("ttft_p90_s %.4f\ntbt_p99_s %.4f\ne2e_p50_s %.3f\npreemptions %lld\ngpu_busy_fraction %.3f\n",
                s.ttft.p90_s, s.tbt_p99_s, s.e2e.p50_s, static_cast<long long>(s.preemptions), s.gpu_busy_fraction);
  } catch (const clustersim::SpecError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
